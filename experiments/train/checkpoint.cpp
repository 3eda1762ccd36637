#include "experiments/train/checkpoint.hpp"
#include "experiments/data/corpus.hpp"
#include "experiments/data/json.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <type_traits>

#include <fmt/format.h>
#include <fmt/ranges.h>

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
    if (!f) throw WriteError(fmt::format("cannot write checkpoint file {}", path));
    f.write(header.data(), static_cast<std::streamsize>(header.size()));
    f.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
    f.close();
    if (!f) throw WriteError(fmt::format("writing checkpoint file {} failed (disk full?)", path));
}

struct NpyHeader {
    std::string descr;
    Shape shape;
    std::size_t data_offset = 0;  // bytes before the data
    std::size_t item = 0;         // bytes per element
};

struct NpyData {
    std::string descr;
    Shape shape;
    std::string bytes;
};

CheckpointError bad_npy(const std::string& path, const std::string& why) {
    return CheckpointError(fmt::format("checkpoint file {} is not a valid .npy file: {}", path, why));
}

// Parses the header at the start of `head` (the file's first bytes, at least 10) and checks that the
// file holds exactly the data the header announces. Never trusts a number it read: a damaged file
// gives a CheckpointError naming it, not an exception from std::stoull or a huge allocation.
NpyHeader parse_npy_header(const std::string& path, const std::string& head, std::size_t file_size) {
    if (head.size() < 10 || head.compare(0, 6, "\x93NUMPY") != 0) throw bad_npy(path, "bad magic");
    if (head[6] != '\x01') throw bad_npy(path, fmt::format("format version {} is not supported (1.0 is)", int(static_cast<unsigned char>(head[6]))));
    const std::size_t hlen = static_cast<unsigned char>(head[8]) | (static_cast<unsigned char>(head[9]) << 8);
    if (head.size() < 10 + hlen || file_size < 10 + hlen) throw bad_npy(path, "truncated header");
    const std::string dict = head.substr(10, hlen);
    NpyHeader h;
    h.data_offset = 10 + hlen;
    const auto p = dict.find("'descr': '");
    const auto q = p == std::string::npos ? p : dict.find('\'', p + 10);
    if (q == std::string::npos) throw bad_npy(path, "no descr");
    h.descr = dict.substr(p + 10, q - (p + 10));
    if (dict.find("'fortran_order': False") == std::string::npos) throw bad_npy(path, "Fortran order is not supported");
    const auto s0 = dict.find("'shape': (");
    const auto s1 = s0 == std::string::npos ? s0 : dict.find(')', s0);
    if (s1 == std::string::npos) throw bad_npy(path, "no shape");
    std::stringstream ss(dict.substr(s0 + 10, s1 - (s0 + 10)));
    std::string tok;
    double count = 1;  // in double: a corrupt shape must not overflow into a plausible size
    while (std::getline(ss, tok, ',')) {
        const auto b = tok.find_first_not_of(' ');
        if (b == std::string::npos) continue;
        const auto e = tok.find_last_not_of(' ');
        const std::string digits = tok.substr(b, e - b + 1);
        if (digits.empty() || digits.size() > 15 || digits.find_first_not_of("0123456789") != std::string::npos)
            throw bad_npy(path, fmt::format("bad shape entry '{}'", digits));
        h.shape.push_back(std::stoull(digits));
        count *= double(h.shape.back());
    }
    h.item = (h.descr == "<f4") ? 4 : (h.descr == "<f8" || h.descr == "<u8") ? 8 : 0;
    if (!h.item) throw bad_npy(path, "unsupported dtype " + h.descr);
    const std::size_t have = file_size - h.data_offset;
    const double want = count * double(h.item);
    if (double(have) < want)
        throw bad_npy(path, fmt::format("truncated: {} bytes of data for shape {}", have, shape_str(h.shape)));
    if (double(have) > want)
        throw bad_npy(path, fmt::format("{} bytes of data, more than shape {} holds ({:.0f})", have, shape_str(h.shape), want));
    return h;
}

// A .npy path must be a regular file: a directory opens as a stream and fails on the first read with
// "basic_filebuf::underflow", which used to surface as an internal error.
void require_regular_file(const std::string& path) {
    std::error_code ec;
    if (fs::exists(path, ec) && !fs::is_regular_file(path, ec))
        throw CheckpointError(fmt::format("checkpoint file {} is not a regular file (a directory or device)", path));
}

NpyData read_raw(const std::string& path) {
    require_regular_file(path);
    std::ifstream f(path, std::ios::binary);
    if (!f) throw CheckpointError(fmt::format("checkpoint file {} is missing", path));
    std::string all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    if (!f.eof() && f.fail()) throw CheckpointError(fmt::format("checkpoint file {} cannot be read", path));
    const NpyHeader h = parse_npy_header(path, all, all.size());
    NpyData d;
    d.descr = h.descr;
    d.shape = h.shape;
    d.bytes = all.substr(h.data_offset);
    return d;
}

// The header only (and the file size): for checking a checkpoint without reading its data.
NpyHeader read_npy_header(const std::string& path) {
    require_regular_file(path);
    std::error_code ec;
    const auto size = fs::file_size(path, ec);
    if (ec) throw CheckpointError(fmt::format("checkpoint file {} is missing", path));
    std::ifstream f(path, std::ios::binary);
    if (!f) throw CheckpointError(fmt::format("checkpoint file {} cannot be read", path));
    std::string head(10, '\0');
    f.read(head.data(), 10);
    head.resize(static_cast<std::size_t>(f.gcount()));
    if (head.size() == 10 && head.compare(0, 6, "\x93NUMPY") == 0) {
        const std::size_t hlen = static_cast<unsigned char>(head[8]) | (static_cast<unsigned char>(head[9]) << 8);
        std::string dict(hlen, '\0');
        f.read(dict.data(), static_cast<std::streamsize>(hlen));
        dict.resize(static_cast<std::size_t>(f.gcount()));
        head += dict;
    }
    return parse_npy_header(path, head, static_cast<std::size_t>(size));
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

bool checkpoint_exists(const std::string& dir) { return fs::exists(fs::path(dir) / "state.json"); }

std::string machines_not_recorded(std::uint64_t steps) { return fmt::format("not recorded (steps 1-{})", steps); }

bool is_machines_not_recorded(const std::string& entry) { return entry.rfind("not recorded (", 0) == 0; }

void save_checkpoint(const std::string& dir, const nn::NamedParams<float>& params, const nn::Adam<float>* adam,
                     const TrainProgress& pr) {
    const fs::path final_dir(dir);
    const fs::path tmp = final_dir.string() + ".tmp";
    fs::remove_all(tmp);
    // A failed write (disk full) leaves no partial .tmp behind; the last complete checkpoint stays.
    try {
        fs::create_directories(tmp / "params");
        if (adam) fs::create_directories(tmp / "optim");
        Json entries = Json::array();
        for (const auto& [name, p] : params) {
            write_npy((tmp / "params" / (name + ".npy")).string(), p.value());
            entries.push_back({{"name", name}, {"file", "params/" + name + ".npy"}, {"shape", p.shape()}, {"dtype", "float32"}});
        }
        if (adam) {
            auto& a = const_cast<nn::Adam<float>&>(*adam);
            for (std::size_t i = 0; i < params.size(); ++i) {
                write_npy((tmp / "optim" / (params[i].first + ".m.npy")).string(), a.first_moments()[i]);
                write_npy((tmp / "optim" / (params[i].first + ".v.npy")).string(), a.second_moments()[i]);
            }
        }
        write_npy_u64((tmp / "rng.npy").string(), std::vector<std::uint64_t>(pr.dropout_rng.begin(), pr.dropout_rng.end()));
        auto write_json = [&](const char* file, const Json& j) {
            std::ofstream f(tmp / file);
            f << json_document(j);
            f.close();
            if (!f) throw WriteError(fmt::format("writing checkpoint file {} failed (disk full?)", (tmp / file).string()));
        };
        write_json("manifest.json", {{"format", "relpos-checkpoint-1"}, {"parameters", entries}});
        // state.json last: its presence marks a complete checkpoint. best_valid_loss is written in full
        // (shortest round-trip digits): a resumed run compares against it exactly.
        Json state = {{"step", pr.step},
                      {"epoch", pr.epoch},
                      {"batch_in_epoch", pr.batch_in_epoch},
                      {"tokens", pr.tokens},
                      {"best_valid_loss", pr.best_valid_loss},
                      {"elapsed_seconds", json_number(pr.elapsed_seconds, 6)},
                      {"adam_steps", adam ? adam->steps() : 0},
                      {"config_hash", pr.config_hash},
                      {"best_step", pr.best_step},
                      {"bad_validations", pr.bad_validations},
                      {"plateau_reference", pr.plateau_reference},
                      {"best_target_metric", pr.best_target_metric},
                      {"target_step", pr.target_step}};
        if (pr.cpu_seconds >= 0) state["cpu_seconds"] = json_number(pr.cpu_seconds, 3);
        if (!pr.machines.empty()) state["machines"] = pr.machines;
        write_json("state.json", state);
    } catch (...) {
        std::error_code ec;
        fs::remove_all(tmp, ec);
        throw;
    }
    // Swap in: old -> .old, tmp -> final, drop .old. A crash in between leaves one complete copy
    // that load_checkpoint_dir() below finds.
    const fs::path old = final_dir.string() + ".old";
    fs::remove_all(old);
    if (fs::exists(final_dir)) fs::rename(final_dir, old);
    fs::rename(tmp, final_dir);
    fs::remove_all(old);
}

namespace {

// The directory that holds the complete copy: `dir`, or `dir`.old when a save was interrupted between
// its two renames.
fs::path complete_copy(const std::string& dir_in) {
    fs::path dir(dir_in);
    if (!fs::exists(dir / "state.json") && fs::exists(fs::path(dir_in + ".old") / "state.json"))
        dir = dir_in + ".old";  // interrupted between the two renames of save_checkpoint
    if (!fs::exists(dir / "state.json"))
        throw CheckpointError(fmt::format("checkpoint {} is incomplete (no state.json)", dir_in));
    return dir;
}

// state.json; adam_steps is returned separately (0 when absent and not needed).
TrainProgress read_state(const fs::path& dir, bool need_adam_steps, std::size_t* adam_steps) {
    const std::string file = (dir / "state.json").string();
    const Json st = parse_json_or_throw<CheckpointError>(read_text_file(file),
                                                         fmt::format("checkpoint {} has an unreadable state.json: it", dir.string()));
    if (!st.is_object())
        throw CheckpointError(fmt::format("checkpoint {} has a malformed state.json: not a JSON object", dir.string()));
    auto field = [&](const char* key, auto& out, const char* what) {
        using T = std::decay_t<decltype(out)>;
        const bool ok = st.contains(key) && (std::is_same_v<T, std::string>         ? st[key].is_string()
                                             : std::is_floating_point_v<T>         ? st[key].is_number()
                                                                                   : st[key].is_number_unsigned());
        if (!ok)
            throw CheckpointError(fmt::format("checkpoint {} has a malformed state.json: '{}' is missing or not {}",
                                              dir.string(), key, what));
        out = st[key].get<T>();
    };
    TrainProgress pr;
    field("step", pr.step, "a whole number");
    field("epoch", pr.epoch, "a whole number");
    field("batch_in_epoch", pr.batch_in_epoch, "a whole number");
    field("tokens", pr.tokens, "a whole number");
    field("best_valid_loss", pr.best_valid_loss, "a number");
    field("elapsed_seconds", pr.elapsed_seconds, "a number");
    field("config_hash", pr.config_hash, "a string");
    if (need_adam_steps) field("adam_steps", *adam_steps, "a whole number");
    // Added with the plateau stopping rule; checkpoints written before it have neither.
    if (st.contains("best_step")) field("best_step", pr.best_step, "a whole number");
    if (st.contains("bad_validations")) field("bad_validations", pr.bad_validations, "a whole number");
    // Added with stop.rule and stop.target (2026-11-26).
    if (st.contains("plateau_reference")) field("plateau_reference", pr.plateau_reference, "a number");
    if (st.contains("best_target_metric")) field("best_target_metric", pr.best_target_metric, "a number");
    if (st.contains("target_step")) field("target_step", pr.target_step, "a whole number");
    // Added 2026-11-27; a checkpoint written before has none (the trainer then says so in the list).
    // Added 2026-11-28 (e7ddf23): a checkpoint without it has training whose CPU time nobody measured.
    pr.cpu_seconds = -1;
    if (st.contains("cpu_seconds")) field("cpu_seconds", pr.cpu_seconds, "a number");
    if (st.contains("machines")) {
        const Json& m = st["machines"];
        if (!is_string_list(m))
            throw CheckpointError(fmt::format(
                "checkpoint {} has a malformed state.json: 'machines' is not a list of strings", dir.string()));
        pr.machines = m.get<std::vector<std::string>>();
    }
    return pr;
}

void check_shape(const fs::path& dir, const std::string& what, const std::string& name, const Shape& have,
                 const Shape& want) {
    if (have != want)
        throw CheckpointError(fmt::format(
            "checkpoint {} holds {} '{}' of shape {} but the model has {}: it was saved from a different model",
            dir.string(), what, name, shape_str(have), shape_str(want)));
}

void check_float(const fs::path& file, const std::string& descr) {
    if (descr != "<f4" && descr != "<f8")
        throw CheckpointError(fmt::format("checkpoint file {} holds {} values, expected floats", file.string(), descr));
}

}  // namespace

TrainProgress verify_checkpoint(const std::string& dir_in, const nn::NamedParams<float>& params, bool with_optimizer) {
    const fs::path dir = complete_copy(dir_in);
    std::size_t adam_steps = 0;
    TrainProgress pr = read_state(dir, with_optimizer, &adam_steps);
    for (const auto& [name, p] : params) {
        const fs::path f = dir / "params" / (name + ".npy");
        if (!fs::exists(f))
            throw CheckpointError(fmt::format("checkpoint {} has no parameter '{}': it was saved from a different model",
                                              dir.string(), name));
        const NpyHeader h = read_npy_header(f.string());
        check_float(f, h.descr);
        check_shape(dir, "parameter", name, h.shape, p.shape());
        if (!with_optimizer) continue;
        for (const char* m : {".m.npy", ".v.npy"}) {
            const fs::path g = dir / "optim" / (name + m);
            const NpyHeader hm = read_npy_header(g.string());
            check_float(g, hm.descr);
            check_shape(dir, "optimiser state", name + m, hm.shape, p.shape());
        }
    }
    const NpyHeader r = read_npy_header((dir / "rng.npy").string());
    if (r.descr != "<u8" || r.shape != Shape{6})
        throw CheckpointError(fmt::format("checkpoint {} has a malformed rng.npy", dir.string()));
    return pr;
}

TrainProgress load_checkpoint(const std::string& dir_in, const nn::NamedParams<float>& params, nn::Adam<float>* adam) {
    const fs::path dir = complete_copy(dir_in);
    std::size_t adam_steps = 0;
    TrainProgress pr = read_state(dir, adam != nullptr, &adam_steps);
    // Read and check everything first, so a damaged or mismatching checkpoint changes nothing.
    std::vector<Array<float>> values;
    for (const auto& [name, p] : params) {
        const std::string f = (dir / "params" / (name + ".npy")).string();
        if (!fs::exists(f))
            throw CheckpointError(fmt::format("checkpoint {} has no parameter '{}': it was saved from a different model",
                                              dir.string(), name));
        Array<float> a = read_npy<float>(f);
        check_shape(dir, "parameter", name, shape_of(a), p.shape());
        values.push_back(std::move(a));
    }
    auto rng = read_npy_u64((dir / "rng.npy").string());
    if (rng.size() != 6) throw CheckpointError(fmt::format("checkpoint {} has a malformed rng.npy", dir.string()));
    std::copy(rng.begin(), rng.end(), pr.dropout_rng.begin());
    std::vector<Array<float>> ms, vs;
    if (adam) {
        for (std::size_t i = 0; i < params.size(); ++i) {
            ms.push_back(read_npy<float>((dir / "optim" / (params[i].first + ".m.npy")).string()));
            vs.push_back(read_npy<float>((dir / "optim" / (params[i].first + ".v.npy")).string()));
            check_shape(dir, "optimiser state", params[i].first + ".m.npy", shape_of(ms.back()), params[i].second.shape());
            check_shape(dir, "optimiser state", params[i].first + ".v.npy", shape_of(vs.back()), params[i].second.shape());
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
        adam->set_steps(adam_steps);
    }
    return pr;
}

}  // namespace relpos
