// Loading a config: the file read and checked as text, parsed as one YAML document, the command-line
// overrides applied, then read by the schema (schema.cpp).
#include "experiments/config/config.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include <fmt/format.h>
#include <yaml-cpp/eventhandler.h>

#include "experiments/config/schema.hpp"
#include "experiments/util/text.hpp"
#include "nn/printable.hpp"

namespace relpos {

namespace {

std::string read_text(const std::string& path) {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (!fs::exists(path, ec)) {
        if (fs::is_symlink(path, ec))  // a dangling link, or one in a loop (exists() says ELOOP)
            throw ConfigError(fmt::format("config file {} is a symbolic link that leads nowhere (dangling, or a "
                                          "loop of links); point it at a YAML file",
                                          path));
        throw ConfigError(fmt::format("config file {} does not exist", path));
    }
    if (fs::is_directory(path, ec)) throw ConfigError(fmt::format("config file {} is a directory, not a YAML file", path));
    // Only regular files, of a config's size: /dev/zero, a FIFO or a 10 GB file would otherwise be read
    // until memory runs out (or forever).
    if (!fs::is_regular_file(path, ec))
        throw ConfigError(fmt::format("config file {} is not a regular file (a device, FIFO or socket); give a YAML file", path));
    constexpr std::uintmax_t kMaxConfigBytes = 1 << 20;
    if (fs::file_size(path, ec) > kMaxConfigBytes)
        throw ConfigError(fmt::format("config file {} is larger than 1 MiB; a config is a short YAML file", path));
    std::ifstream in(path, std::ios::binary);
    if (!in) throw ConfigError(fmt::format("config file {} cannot be read", path));
    std::ostringstream ss;
    ss << in.rdbuf();
    std::string text = ss.str();
    // A NUL byte is valid UTF-8 but no text: yaml-cpp reads it as a broken escape ("unknown escape character").
    if (const auto nul = text.find('\0'); nul != std::string::npos)
        throw ConfigError(fmt::format("config file {} line {} holds a NUL byte (a config is text; is it a binary file?)",
                                      path, 1 + std::count(text.begin(), text.begin() + static_cast<long>(nul), '\n')));
    // Nesting that no config needs (a relpos config nests 4 levels): yaml-cpp gives up on 100,000 levels
    // with "bad file", and recursion that deep risks the stack. Brackets inside quotes and comments do not count.
    {
        constexpr int kMaxDepth = 64;
        int depth = 0;
        std::size_t line = 1;
        char quote = 0;
        bool comment = false;
        for (std::size_t i = 0; i < text.size(); ++i) {
            const char ch = text[i];
            if (ch == '\n') {
                ++line;
                comment = false;
                continue;
            }
            if (comment) continue;
            if (quote) {
                if (ch == quote && !(quote == '"' && i > 0 && text[i - 1] == '\\')) quote = 0;
                continue;
            }
            if (ch == '#' && (i == 0 || text[i - 1] == ' ' || text[i - 1] == '\t' || text[i - 1] == '\n')) comment = true;
            else if (ch == '"' || ch == '\'') quote = ch;
            else if (ch == '[' || ch == '{') {
                if (++depth > kMaxDepth)
                    throw ConfigError(fmt::format("config file {} line {} nests lists or maps more than {} levels deep (a "
                                                  "relpos config needs 4)",
                                                  path, line, kMaxDepth));
            } else if ((ch == ']' || ch == '}') && depth > 0) {
                --depth;
            }
        }
    }
    // YAML is Unicode text; yaml-cpp would pass stray bytes through into names, descriptions and results.json.
    if (!is_valid_utf8(text)) {
        std::size_t line = 1, start = 0;
        for (;;) {
            const std::size_t end = text.find('\n', start);
            if (!is_valid_utf8(text.substr(start, end == std::string::npos ? std::string::npos : end - start))) break;
            if (end == std::string::npos) break;
            start = end + 1;
            ++line;
        }
        throw ConfigError(fmt::format("config file {} line {} is not valid UTF-8 (a config is UTF-8 text)", path, line));
    }
    return text;
}

std::string mark_text(const std::string& path, const YAML::Mark& m) {
    if (m.is_null()) return path;
    return fmt::format("{}:{}:{}", path, m.line + 1, m.column + 1);
}

// Where each document of a YAML text starts (its first node), without building the documents.
class DocumentMarks : public YAML::EventHandler {
public:
    std::vector<YAML::Mark> starts;       // OnDocumentStart
    std::vector<YAML::Mark> first_nodes;  // the first node of each document

    void OnDocumentStart(const YAML::Mark& m) override {
        starts.push_back(m);
        pending_ = true;
    }
    void OnDocumentEnd() override {}
    void OnNull(const YAML::Mark& m, YAML::anchor_t) override { node(m); }
    void OnAlias(const YAML::Mark& m, YAML::anchor_t) override { node(m); }
    void OnScalar(const YAML::Mark& m, const std::string&, YAML::anchor_t, const std::string&) override { node(m); }
    void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
        node(m);
    }
    void OnSequenceEnd() override {}
    void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
        node(m);
    }
    void OnMapEnd() override {}

private:
    void node(const YAML::Mark& m) {
        if (pending_) first_nodes.push_back(m);
        pending_ = false;
    }
    bool pending_ = false;
};

YAML::Node parse_document(const std::string& text, const std::string& path) {
    // The documents are counted with a parser loop that must make progress, not with YAML::LoadAll:
    // yaml-cpp 0.7 returns empty documents forever, without moving on and allocating each one, when a
    // ',' stands outside any list or map (a config of just "," ate all memory; found by fuzz/fuzz_config.cpp).
    DocumentMarks marks;
    YAML::Node root;
    try {
        std::stringstream in(text);
        YAML::Parser parser(in);
        while (parser.HandleNextDocument(marks)) {
            const auto& s = marks.starts;
            if (s.size() >= 2 && s[s.size() - 1].pos == s[s.size() - 2].pos) {
                const YAML::Mark m = s.back();
                const std::string what = m.pos >= 0 && std::size_t(m.pos) < text.size()
                                             ? fmt::format("'{}' outside any list or map", text[std::size_t(m.pos)])
                                             : std::string("a token outside any list or map");
                throw ConfigError(fmt::format("{}: invalid YAML: {}", mark_text(path, m), what));
            }
        }
        root = YAML::Load(text);  // the first document
    } catch (const YAML::ParserException& e) {
        throw ConfigError(fmt::format("{}: invalid YAML: {}", mark_text(path, e.mark), e.msg));
    }
    const std::size_t docs = marks.starts.size();
    if (docs == 0 || (docs == 1 && root.IsNull()))
        throw ConfigError(fmt::format("config file {} is empty (expected a map of settings with at least 'name')", path));
    if (docs > 1)
        throw ConfigError(fmt::format("{}: the file holds {} YAML documents; a config is one map of settings",
                                      mark_text(path, marks.first_nodes.size() > 1 ? marks.first_nodes[1] : marks.starts[1]),
                                      docs));
    if (!root.IsMap())
        throw ConfigError(fmt::format("{}: the top level must be a map of settings (name, data, model, train, ...), got {}",
                                      mark_text(path, root.Mark()), describe_node(root)));
    return root;
}

// ---- overrides

[[noreturn]] void fail_assignment(const Assignment& a, const std::string& what) {
    throw ConfigError(nn::printable(fmt::format("{}: {}{}: {}", a.location, a.shown_prefix, a.key, what)));
}

// Writes a.value at a.key, creating missing maps on the way. A list must be indexed ([i]); indices
// must exist (an override changes entries, it does not append them).
void apply(YAML::Node root, const Assignment& a) {
    const auto parts = split_key(a.key);
    if (!parts) fail_assignment(a, fmt::format("is not {}", kKeyExample));
    // A fresh copy: the same assignment is applied to one tree per sweep point, and later assignments
    // may write inside this value.
    const YAML::Node value = YAML::Clone(a.value);
    YAML::Node cur;
    cur.reset(root);  // reset() rebinds the handle; operator= would overwrite the node it points to
    std::string so_far;
    for (std::size_t i = 0; i < parts->size(); ++i) {
        const KeyPart& p = (*parts)[i];
        const bool last_part = i + 1 == parts->size();
        if (cur.IsSequence()) {
            std::string rest = p.name;
            for (std::size_t j = i + 1; j < parts->size(); ++j) rest += "." + (*parts)[j].name;
            fail_assignment(a, fmt::format("{} is a list of {} entries, so name one, e.g. {}[0].{}", so_far,
                                           cur.size(), so_far, rest));
        }
        if (cur.IsScalar())
            fail_assignment(a, fmt::format("{} is a single value ({}), so it has no key '{}'", so_far,
                                           describe_node(cur), p.name));
        so_far += (so_far.empty() ? "" : ".") + p.name;
        if (last_part && p.indices.empty()) {
            // A whole section written as a map (train={lr: 0.6}, or a sweep axis over `train`) changes the
            // keys it names and keeps the file's others: replacing the section would silently reset every
            // other key of it to its default. Plug-in specs (model.position) are still replaced whole.
            const bool section = parts->size() == 1 && (p.name == "data" || p.name == "model" || p.name == "train" ||
                                                        p.name == "eval");
            if (section && value.IsMap() && cur[p.name].IsMap()) {
                YAML::Node existing = cur[p.name];
                for (auto it : value) existing[it.first.as<std::string>()] = it.second;
                return;
            }
            cur[p.name] = value;
            return;
        }
        YAML::Node next = cur[p.name];
        cur.reset(next);
        for (std::size_t j = 0; j < p.indices.size(); ++j) {
            const std::size_t idx = p.indices[j];
            if (!cur.IsDefined())
                fail_assignment(a, fmt::format("{} is not set in the file, so [{}] does not apply", so_far, idx));
            if (!cur.IsSequence())
                fail_assignment(a, fmt::format("{} is {}, not a list, so [{}] does not apply", so_far,
                                               describe_node(cur), idx));
            if (idx >= cur.size())
                fail_assignment(a, fmt::format("{} has {} entries, so [{}] is out of range", so_far, cur.size(), idx));
            so_far += fmt::format("[{}]", idx);
            if (last_part && j + 1 == p.indices.size()) {
                cur[idx] = value;
                return;
            }
            YAML::Node elem = cur[idx];
            cur.reset(elem);
        }
    }
}

}  // namespace

Assignment parse_override(const std::string& text) {
    Assignment a;
    a.location = fmt::format("command-line override '{}'", nn::printable(text));
    // The rule of the config file (read_text): stray bytes would go into config.yaml and results.json, and
    // the run's own config would then be refused by eval, translate and report.
    if (!is_valid_utf8(text))
        throw ConfigError(fmt::format("{} is not valid UTF-8 (a config is UTF-8 text, and so is an override; convert "
                                      "it first, e.g. with iconv -f latin1 -t utf-8)",
                                      a.location));
    const auto eq = text.find('=');
    if (eq == std::string::npos)
        throw ConfigError(fmt::format("{}: expected key=value, e.g. model.dropout=0.3 or data.test_splits=[val,test2016]",
                                      a.location));
    a.key = trim(text.substr(0, eq));
    if (a.key.empty()) throw ConfigError(fmt::format("{}: the key before '=' is empty", a.location));
    if (!split_key(a.key))
        throw ConfigError(fmt::format("{}: '{}' is not {}", a.location, nn::printable(a.key), kKeyExample));
    const std::string value = trim(text.substr(eq + 1));
    if (value.empty()) {
        a.value = YAML::Node(std::string());  // "key=" sets an empty string, not null
        return a;
    }
    try {
        a.value = YAML::Load(value);
    } catch (const YAML::ParserException& e) {
        throw ConfigError(fmt::format("{}: {}: the value is not valid YAML: {}", a.location, a.key, nn::printable(e.msg)));
    }
    return a;
}

ExperimentConfig resolve_config(const std::string& path, const std::vector<Assignment>& assignments,
                                const LoadFlags& flags) {
    try {
        const YAML::Node root = parse_document(read_text(path), path);
        auto origins = std::make_shared<ValueOrigins>();
        for (const auto& a : assignments) {
            apply(root, a);
            origins->push_back({a.key, a.location, a.shown_prefix});
        }
        ExperimentConfig cfg = parse_tree(root, path, origins, flags);
        if (flags.check_grid_values) {
            // Each grid value on its own against the resolved file: catches a bad value (or a misspelt key)
            // at load time, naming the sweep key. Rules across keys wait for whole points (expand_sweep),
            // since a value may only be valid together with another axis's value.
            LoadFlags one{false, false, false};
            for (const auto& axis : cfg.sweep.grid)
                for (std::size_t j = 0; j < axis.values.size(); ++j) {
                    std::vector<Assignment> with = assignments;
                    with.push_back({axis.key, axis.values[j], axis.value_locations[j], "sweep.grid."});
                    resolve_config(path, with, one);
                }
            // Each cell whole (its values belong together), without the grid's.
            for (std::size_t j = 0; j < cfg.sweep.cell_count(); ++j) {
                std::vector<Assignment> with = assignments;
                for (const auto& axis : cfg.sweep.cells)
                    with.push_back({axis.key, axis.values[j], axis.value_locations[j], fmt::format("sweep.cells[{}].", j)});
                resolve_config(path, with, one);
            }
        }
        return cfg;
    } catch (const nn::OptionError& e) {
        throw ConfigError(e.what());
    } catch (const YAML::Exception& e) {
        // Not expected (values are read without yaml-cpp conversions), but never let one escape unlocated.
        throw ConfigError(fmt::format("{}: {}", path, e.what()));
    }
}

ExperimentConfig load_config(const std::string& path, const std::vector<std::string>& overrides,
                             const LoadFlags& flags) {
    std::vector<Assignment> assignments;
    for (const auto& o : overrides) assignments.push_back(parse_override(o));
    return resolve_config(path, assignments, flags);
}

}  // namespace relpos
