#include "experiments/checkpoint.hpp"

#include <array>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

namespace relpos {

namespace fs = std::filesystem;

namespace {

std::string npy_header(const std::string& descr, const Shape& shape) {
    std::string sh = "(";
    for (std::size_t i = 0; i < shape.size(); ++i) sh += std::to_string(shape[i]) + (shape.size() == 1 || i + 1 < shape.size() ? "," : "");
    sh += ")";
    std::string dict = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}", descr, sh);
    // magic(6) + version(2) + len(2) + dict + padding + '\n' must be a multiple of 64
    std::size_t total = 10 + dict.size() + 1;
    dict.append((64 - total % 64) % 64, ' ');
    dict += '\n';
    std::string h = "\x93NUMPY";
    h += '\x01';
    h += '\x00';
    const std::uint16_t len = static_cast<std::uint16_t>(dict.size());
    h += static_cast<char>(len & 0xff);
    h += static_cast<char>(len >> 8);
    return h + dict;
}

void write_raw(const std::string& path, const std::string& header, const void* data, std::size_t bytes) {
    std::ofstream f(path, std::ios::binary);
    if (!f) throw CheckpointError(fmt::format("cannot write checkpoint file {}", path));
    f.write(header.data(), static_cast<std::streamsize>(header.size()));
    f.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
    if (!f) throw CheckpointError(fmt::format("writing checkpoint file {} failed (disk full?)", path));
}

struct NpyData {
    std::string descr;
    Shape shape;
    std::string bytes;
};

NpyData read_raw(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw CheckpointError(fmt::format("checkpoint file {} is missing", path));
    std::string all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    auto bad = [&](const std::string& why) {
        return CheckpointError(fmt::format("checkpoint file {} is not a valid .npy file: {}", path, why));
    };
    if (all.size() < 10 || all.compare(0, 6, "\x93NUMPY") != 0) throw bad("bad magic");
    const std::size_t hlen = static_cast<unsigned char>(all[8]) | (static_cast<unsigned char>(all[9]) << 8);
    if (all.size() < 10 + hlen) throw bad("truncated header");
    const std::string dict = all.substr(10, hlen);
    NpyData d;
    auto p = dict.find("'descr': '");
    if (p == std::string::npos) throw bad("no descr");
    d.descr = dict.substr(p + 10, dict.find('\'', p + 10) - (p + 10));
    if (dict.find("'fortran_order': False") == std::string::npos) throw bad("Fortran order is not supported");
    auto s0 = dict.find("'shape': (");
    if (s0 == std::string::npos) throw bad("no shape");
    auto s1 = dict.find(')', s0);
    std::stringstream ss(dict.substr(s0 + 10, s1 - (s0 + 10)));
    std::string tok;
    while (std::getline(ss, tok, ','))
        if (tok.find_first_not_of(' ') != std::string::npos) d.shape.push_back(std::stoull(tok));
    d.bytes = all.substr(10 + hlen);
    std::size_t item = (d.descr == "<f4") ? 4 : (d.descr == "<f8" || d.descr == "<u8") ? 8 : 0;
    if (!item) throw bad("unsupported dtype " + d.descr);
    if (d.bytes.size() != numel(d.shape) * item)
        throw bad(fmt::format("truncated: {} bytes of data for shape {}", d.bytes.size(), shape_str(d.shape)));
    return d;
}

}  // namespace

void write_npy(const std::string& path, const Array<float>& a) {
    write_raw(path, npy_header("<f4", shape_of(a)), a.data(), a.size() * sizeof(float));
}
void write_npy(const std::string& path, const Array<double>& a) {
    write_raw(path, npy_header("<f8", shape_of(a)), a.data(), a.size() * sizeof(double));
}
void write_npy_u64(const std::string& path, const std::vector<std::uint64_t>& v) {
    write_raw(path, npy_header("<u8", {v.size()}), v.data(), v.size() * 8);
}

template <class T>
Array<T> read_npy(const std::string& path) {
    NpyData d = read_raw(path);
    Array<T> a = uninit<T>(d.shape);
    if (d.descr == "<f4") {
        const float* p = reinterpret_cast<const float*>(d.bytes.data());
        for (std::size_t i = 0; i < a.size(); ++i) a.data()[i] = T(p[i]);
    } else if (d.descr == "<f8") {
        const double* p = reinterpret_cast<const double*>(d.bytes.data());
        for (std::size_t i = 0; i < a.size(); ++i) a.data()[i] = T(p[i]);
    } else {
        throw CheckpointError(fmt::format("checkpoint file {} holds {} values, expected floats", path, d.descr));
    }
    return a;
}
template Array<float> read_npy(const std::string&);
template Array<double> read_npy(const std::string&);

std::vector<std::uint64_t> read_npy_u64(const std::string& path) {
    NpyData d = read_raw(path);
    if (d.descr != "<u8") throw CheckpointError(fmt::format("checkpoint file {} does not hold uint64 values", path));
    std::vector<std::uint64_t> v(numel(d.shape));
    std::memcpy(v.data(), d.bytes.data(), v.size() * 8);
    return v;
}

std::string json_escape(const std::string& s) {
    std::string r;
    for (char c : s) {
        if (c == '"' || c == '\\') r += '\\', r += c;
        else if (c == '\n') r += "\\n";
        else if (static_cast<unsigned char>(c) < 0x20) r += fmt::format("\\u{:04x}", c);
        else r += c;
    }
    return r;
}

bool checkpoint_exists(const std::string& dir) { return fs::exists(fs::path(dir) / "state.json"); }

void save_checkpoint(const std::string& dir, const nn::NamedParams<float>& params, const nn::Adam<float>* adam,
                     const TrainProgress& pr) {
    const fs::path final_dir(dir);
    const fs::path tmp = final_dir.string() + ".tmp";
    fs::remove_all(tmp);
    fs::create_directories(tmp / "params");
    if (adam) fs::create_directories(tmp / "optim");
    std::string manifest = "{\n  \"format\": \"relpos-checkpoint-1\",\n  \"parameters\": [\n";
    for (std::size_t i = 0; i < params.size(); ++i) {
        const auto& [name, p] = params[i];
        write_npy((tmp / "params" / (name + ".npy")).string(), p.value());
        manifest += fmt::format("    {{\"name\": \"{}\", \"file\": \"params/{}.npy\", \"shape\": [{}], \"dtype\": \"float32\"}}{}\n",
                                name, name, fmt::join(p.shape(), ", "), i + 1 < params.size() ? "," : "");
    }
    manifest += "  ]\n}\n";
    if (adam) {
        auto& a = const_cast<nn::Adam<float>&>(*adam);
        for (std::size_t i = 0; i < params.size(); ++i) {
            write_npy((tmp / "optim" / (params[i].first + ".m.npy")).string(), a.first_moments()[i]);
            write_npy((tmp / "optim" / (params[i].first + ".v.npy")).string(), a.second_moments()[i]);
        }
    }
    write_npy_u64((tmp / "rng.npy").string(), std::vector<std::uint64_t>(pr.dropout_rng.begin(), pr.dropout_rng.end()));
    {
        std::ofstream m(tmp / "manifest.json");
        m << manifest;
        // state.json last: its presence marks a complete checkpoint
        std::ofstream s(tmp / "state.json");
        s << fmt::format(
            "{{\"step\": {}, \"epoch\": {}, \"batch_in_epoch\": {}, \"tokens\": {}, \"best_valid_loss\": {:.17g}, "
            "\"elapsed_seconds\": {:.6f}, \"adam_steps\": {}, \"config_hash\": \"{}\"}}\n",
            pr.step, pr.epoch, pr.batch_in_epoch, pr.tokens, pr.best_valid_loss, pr.elapsed_seconds,
            adam ? adam->steps() : 0, json_escape(pr.config_hash));
        if (!s) throw CheckpointError(fmt::format("writing checkpoint {} failed (disk full?)", dir));
    }
    // Swap in: old -> .old, tmp -> final, drop .old. A crash in between leaves one complete copy
    // that load_checkpoint_dir() below finds.
    const fs::path old = final_dir.string() + ".old";
    fs::remove_all(old);
    if (fs::exists(final_dir)) fs::rename(final_dir, old);
    fs::rename(tmp, final_dir);
    fs::remove_all(old);
}

TrainProgress load_checkpoint(const std::string& dir_in, const nn::NamedParams<float>& params, nn::Adam<float>* adam) {
    fs::path dir(dir_in);
    if (!fs::exists(dir / "state.json") && fs::exists(fs::path(dir_in + ".old") / "state.json"))
        dir = dir_in + ".old";  // interrupted between the two renames of save_checkpoint
    if (!fs::exists(dir / "state.json"))
        throw CheckpointError(fmt::format("checkpoint {} is incomplete (no state.json)", dir_in));
    YAML::Node st;
    try {
        st = YAML::LoadFile((dir / "state.json").string());
    } catch (const std::exception& e) {
        throw CheckpointError(fmt::format("checkpoint {} has an unreadable state.json: {}", dir.string(), e.what()));
    }
    // Check every shape first, so a mismatching checkpoint changes nothing.
    std::vector<Array<float>> values;
    for (const auto& [name, p] : params) {
        const std::string f = (dir / "params" / (name + ".npy")).string();
        if (!fs::exists(f))
            throw CheckpointError(fmt::format("checkpoint {} has no parameter '{}': it was saved from a different model",
                                              dir.string(), name));
        Array<float> a = read_npy<float>(f);
        if (shape_of(a) != p.shape())
            throw CheckpointError(fmt::format(
                "checkpoint {} holds parameter '{}' of shape {} but the model has {}: it was saved from a different model",
                dir.string(), name, shape_str(shape_of(a)), shape_str(p.shape())));
        values.push_back(std::move(a));
    }
    TrainProgress pr;
    try {
        pr.step = st["step"].as<std::uint64_t>();
        pr.epoch = st["epoch"].as<std::uint64_t>();
        pr.batch_in_epoch = st["batch_in_epoch"].as<std::uint64_t>();
        pr.tokens = st["tokens"].as<std::uint64_t>();
        pr.best_valid_loss = st["best_valid_loss"].as<double>();
        pr.elapsed_seconds = st["elapsed_seconds"].as<double>();
        pr.config_hash = st["config_hash"].as<std::string>();
    } catch (const std::exception& e) {
        throw CheckpointError(fmt::format("checkpoint {} has a malformed state.json: {}", dir.string(), e.what()));
    }
    auto rng = read_npy_u64((dir / "rng.npy").string());
    if (rng.size() != 6) throw CheckpointError(fmt::format("checkpoint {} has a malformed rng.npy", dir.string()));
    std::copy(rng.begin(), rng.end(), pr.dropout_rng.begin());
    std::vector<Array<float>> ms, vs;
    if (adam) {
        for (std::size_t i = 0; i < params.size(); ++i) {
            ms.push_back(read_npy<float>((dir / "optim" / (params[i].first + ".m.npy")).string()));
            vs.push_back(read_npy<float>((dir / "optim" / (params[i].first + ".v.npy")).string()));
            if (shape_of(ms.back()) != params[i].second.shape() || shape_of(vs.back()) != params[i].second.shape())
                throw CheckpointError(fmt::format("checkpoint {} has optimiser state of the wrong shape for '{}'",
                                                  dir.string(), params[i].first));
        }
    }
    for (std::size_t i = 0; i < params.size(); ++i) {
        Var<float> p = params[i].second;
        std::copy(values[i].begin(), values[i].end(), p.value().begin());
    }
    if (adam) {
        for (std::size_t i = 0; i < params.size(); ++i) {
            adam->first_moments()[i] = std::move(ms[i]);
            adam->second_moments()[i] = std::move(vs[i]);
        }
        adam->set_steps(st["adam_steps"].as<std::size_t>());
    }
    return pr;
}

}  // namespace relpos
