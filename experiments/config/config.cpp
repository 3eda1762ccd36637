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

#include "experiments/util/text.hpp"
#include "nn/printable.hpp"

namespace relpos {

namespace {

constexpr long kNoMax = std::numeric_limits<long>::max();
constexpr double kInf = std::numeric_limits<double>::infinity();

const std::vector<std::string> kLanguages{"de", "en"};
// Every metric some task computes; which task computes which is checked by make_task (experiments/tasks).
const std::vector<std::string> kMetrics{"bleu",        "bleu_tok", "loss",           "ppl", "accuracy", "token_accuracy",
                                        "ppl_sliding", "extension_ratio"};
const std::vector<std::string> kPlots{"learning_curves", "metric_vs_row", "attention", "metric_vs_length"};
// Keys that describe the experiment rather than one run: sweeping them would not change a run or would
// move runs out of the experiment's directory.
const std::vector<std::string> kUnsweepable{"name", "description", "results_dir", "run_store", "sweep", "report"};

// ---- dotted keys: name(.name)* where each name may carry list indices, e.g. model.position[1].k.
// "sweep.grid.<key>" is special: the grid's own keys are dotted, so everything after "sweep.grid." is
// one map key.
struct KeyPart {
    std::string name;
    std::vector<std::size_t> indices;
};

bool is_name_char(char ch) {
    return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '-';
}

std::optional<std::vector<KeyPart>> split_key(const std::string& key) {
    static const std::string grid_prefix = "sweep.grid.";
    if (key.compare(0, grid_prefix.size(), grid_prefix) == 0) {
        const std::string rest = key.substr(grid_prefix.size());
        if (!split_key(rest)) return std::nullopt;
        return std::vector<KeyPart>{{"sweep", {}}, {"grid", {}}, {rest, {}}};
    }
    std::vector<KeyPart> parts;
    std::size_t i = 0;
    while (true) {
        KeyPart p;
        while (i < key.size() && is_name_char(key[i])) p.name += key[i++];
        if (p.name.empty()) return std::nullopt;
        while (i < key.size() && key[i] == '[') {
            std::size_t j = i + 1;
            std::string digits;
            while (j < key.size() && std::isdigit(static_cast<unsigned char>(key[j]))) digits += key[j++];
            if (digits.empty() || digits.size() > 9 || j >= key.size() || key[j] != ']') return std::nullopt;
            p.indices.push_back(std::stoul(digits));
            i = j + 1;
        }
        parts.push_back(std::move(p));
        if (i == key.size()) return parts;
        if (key[i] != '.') return std::nullopt;
        ++i;
    }
}

const char* kKeyExample = "a dotted key such as model.dropout or model.position[1].k";

// ---- reading the file

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

// ---- the schema

std::vector<std::string> all_splits(const DataConfig& d) {
    std::vector<std::string> out{d.valid_split};
    for (const auto& s : d.test_splits)
        if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
    return out;
}

LengthRange read_length_range(YamlOptions& o, const std::string& key, LengthRange def) {
    o.declare(key, "[min, max]", fmt::format("[{}, {}]", def.min, def.max), "integers, 1 <= min <= max");
    if (!o.has(key)) return def;
    const YAML::Node n = o.get_node(key);
    const std::string expect = "must be [min, max] with integers 1 <= min <= max";
    if (!n.IsSequence() || n.size() != 2) o.fail(key, fmt::format("{}, got {}", expect, value_text(n)));
    LengthRange r;
    long* out[2] = {&r.min, &r.max};
    for (std::size_t i = 0; i < 2; ++i) {
        const YAML::Node item = n[i];
        char* end = nullptr;
        const std::string s = item.IsScalar() ? item.Scalar() : "";
        const long v = s.empty() ? 0 : std::strtol(s.c_str(), &end, 10);
        if (s.empty() || *end != '\0' || v < 1)
            o.fail_at(item, fmt::format("{}[{}]", o.key_path(key), i), fmt::format("{}, got {}", expect, describe_node(item)));
        *out[i] = v;
    }
    if (r.min > r.max) o.fail(key, fmt::format("{}, got [{}, {}]", expect, r.min, r.max));
    return r;
}

void read_synthetic(YamlOptions o, SyntheticConfig& s) {
    s.n_symbols = o.get_int("n_symbols", s.n_symbols, 2, kNoMax);
    s.train_size = o.get_int("train_size", s.train_size, 1, kNoMax);
    s.valid_size = o.get_int("valid_size", s.valid_size, 1, kNoMax);
    s.test_size = o.get_int("test_size", s.test_size, 1, kNoMax);
    s.train_len = read_length_range(o, "train_len", s.train_len);
    s.test_len = read_length_range(o, "test_len", s.test_len);
    o.finish();
}

void read_lm(YamlOptions o, LanguageModelConfig& l) {
    l.context = o.get_int("context", l.context, 2, kNoMax);
    {
        std::string def;
        for (long v : l.eval_lengths) def += (def.empty() ? "" : ", ") + std::to_string(v);
        o.declare("eval_lengths", "list of ints", "[" + def + "]", "non-empty, each >= 2");
    }
    if (o.has("eval_lengths")) {
        const YAML::Node n = o.get_node("eval_lengths");
        const std::string expect = "must be a non-empty list of integers >= 2 (window lengths)";
        if (!n.IsSequence() || n.size() == 0) o.fail("eval_lengths", fmt::format("{}, got {}", expect, value_text(n)));
        l.eval_lengths.clear();
        for (std::size_t i = 0; i < n.size(); ++i) {
            const std::string t = n[i].IsScalar() ? n[i].Scalar() : "";
            char* end = nullptr;
            const long v = t.empty() ? 0 : std::strtol(t.c_str(), &end, 10);
            if (t.empty() || *end != '\0' || v < 2)
                o.fail_at(n[i], fmt::format("{}[{}]", o.key_path("eval_lengths"), i), fmt::format("{}, got {}", expect, describe_node(n[i])));
            l.eval_lengths.push_back(v);
        }
    }
    l.stride = o.get_int("stride", l.stride, 0, kNoMax);
    for (long n : l.eval_lengths)
        if (l.stride > n) o.fail("stride", fmt::format("must be at most the shortest of eval_lengths ({}), got {}", n, l.stride));
    l.max_eval_tokens = o.get_int("max_eval_tokens", l.max_eval_tokens, 0, kNoMax);
    o.finish();
}

void read_data(YamlOptions& o, DataConfig& d) {
    d.task = o.get_string("task", d.task);
    if (d.task.empty()) o.fail("task", "must name a registered task (relpos list shows them)");
    const TaskDataSchema* task = task_data_schema(d.task);  // nullptr: unknown, reported by make_task
    if (task && !task->dir.empty()) d.dir = task->dir;        // the task's own default
    d.dir = o.get_string("dir", d.dir);
    d.src = o.get_string("src", d.src, kLanguages);
    d.tgt = o.get_string("tgt", d.tgt, kLanguages);
    d.tokenized = o.get_bool("tokenized", d.tokenized);
    d.vocab_size = o.get_int("vocab_size", d.vocab_size, 100, 64000);
    d.subword_model = o.get_string("subword_model", d.subword_model, {"unigram", "bpe"});
    d.max_len = o.get_int("max_len", d.max_len, 1, kNoMax);
    d.max_train_examples = o.get_int("max_train_examples", d.max_train_examples, 0, kNoMax);
    d.valid_split = o.get_string("valid_split", d.valid_split);
    if (d.valid_split.empty()) o.fail("valid_split", "must name a split, e.g. val");
    // The task's own test splits (most tasks have one called test).
    d.test_splits = default_test_splits(d.task);
    d.test_splits = o.get_string_list("test_splits", d.test_splits);
    for (const auto& s : d.test_splits)
        if (s.empty()) o.fail("test_splits", "must not contain an empty split name");
    read_synthetic(o.section("synthetic"), d.synthetic);
    read_lm(o.section("lm"), d.lm);
    o.finish();
}

PositionSpec read_position_spec(const YAML::Node& node, const std::string& key, const std::string& file,
                                const std::shared_ptr<const ValueOrigins>& origins) {
    YamlOptions o(node, file, key, origins);
    PositionSpec spec;
    spec.type = o.require_string("type", "the name of a registered position encoding, e.g. sinusoidal or shaw");
    if (spec.type.empty()) o.fail("type", "must name a registered position encoding, e.g. sinusoidal or shaw");
    spec.node = node;
    spec.file = file;
    spec.key = key;
    spec.origins = origins;
    return spec;
}

void read_model(YamlOptions& o, ModelConfig& m, const std::string& file,
                const std::shared_ptr<const ValueOrigins>& origins) {
    m.family = o.get_string("family", m.family, {"encoder_decoder", "decoder_only", "encoder_only"});
    m.d_model = o.get_int("d_model", m.d_model, 1, kNoMax);
    m.heads = o.get_int("heads", m.heads, 1, kNoMax);
    m.d_ff = o.get_int("d_ff", m.d_ff, 1, kNoMax);
    m.encoder_layers = o.get_int("encoder_layers", m.encoder_layers, 1, kNoMax);
    m.decoder_layers = o.get_int("decoder_layers", m.decoder_layers, 1, kNoMax);
    m.dropout = o.get_number("dropout", m.dropout, 0, 1, false, true);
    m.attention_dropout = o.get_number("attention_dropout", m.attention_dropout, 0, 1, false, true);
    m.norm = o.get_string("norm", m.norm, {"post", "pre"});
    m.share_embeddings = o.get_string("share_embeddings", m.share_embeddings, {"none", "decoder", "all"});
    m.scale_embeddings = o.get_bool("scale_embeddings", m.scale_embeddings);
    o.declare("position", "map or list of maps", "[{type: sinusoidal}]", "registered encodings (relpos list)");
    if (o.has("position")) {
        const YAML::Node pos = o.get_node("position");
        const std::string key = o.key_path("position");
        m.position.clear();
        if (pos.IsMap()) {
            m.position.push_back(read_position_spec(pos, key, file, origins));
        } else if (pos.IsSequence()) {
            for (std::size_t i = 0; i < pos.size(); ++i) {
                const YAML::Node item = pos[i];
                const std::string item_key = fmt::format("{}[{}]", key, i);
                if (!item.IsMap())
                    o.fail_at(item, item_key,
                              fmt::format("must be a map {{type: <encoding>, ...options}}, got {}", describe_node(item)));
                m.position.push_back(read_position_spec(item, item_key, file, origins));
            }
        } else {
            o.fail("position", fmt::format("must be a map {{type: <encoding>, ...options}} or a list of such maps "
                                           "(e.g. {{type: shaw, k: 16}}), got {}", describe_node(pos)));
        }
    } else {
        m.position = default_position();
        for (auto& p : m.position) {
            p.file = file;
            p.origins = origins;
        }
    }
    o.finish();
}

void read_train(YamlOptions& o, TrainConfig& t) {
    t.epochs = o.get_int("epochs", t.epochs, 0, kNoMax);
    t.max_steps = o.get_int("max_steps", t.max_steps, 0, kNoMax);
    t.batch_tokens = o.get_int("batch_tokens", t.batch_tokens, 1, kNoMax);
    t.lr = o.get_number("lr", t.lr, 0, kInf, true, false);
    t.warmup = o.get_int("warmup", t.warmup, 1, kNoMax);
    t.label_smoothing = o.get_number("label_smoothing", t.label_smoothing, 0, 1, false, true);
    t.clip_norm = o.get_number("clip_norm", t.clip_norm, 0, kInf, false, false);
    t.adam_beta1 = o.get_number("adam_beta1", t.adam_beta1, 0, 1, false, true);
    t.adam_beta2 = o.get_number("adam_beta2", t.adam_beta2, 0, 1, false, true);
    t.adam_eps = o.get_number("adam_eps", t.adam_eps, 0, kInf, true, false);
    t.eval_every = o.get_int("eval_every", t.eval_every, 0, kNoMax);
    t.checkpoint_every = o.get_int("checkpoint_every", t.checkpoint_every, 0, kNoMax);
    t.on_nonfinite = o.get_string("on_nonfinite", t.on_nonfinite, {"stop", "skip"});
    t.time_limit_minutes = o.get_number("time_limit_minutes", t.time_limit_minutes, 0, kInf, false, false);
    if (o.has("stop")) {
        YamlOptions st = o.section("stop");
        t.patience = st.get_int("patience", t.patience, 0, kNoMax);
        t.min_delta = st.get_number("min_delta", t.min_delta, 0, kInf, false, false);
        t.stop_rule = st.get_string("rule", t.stop_rule, {"improvement", "running_best"});
        t.target_metric = st.get_string("target_metric", t.target_metric);
        t.target = st.get_number("target", t.target, -kInf, kInf, false, false);
        if (t.target_metric.empty() && st.has("target"))
            st.fail("target", "needs stop.target_metric (the validation metric it is a target for, e.g. accuracy)");
        if (!t.target_metric.empty() && !st.has("target"))
            st.fail("target_metric", "needs stop.target (the value that counts as reached, e.g. 99)");
        if (!t.target_metric.empty() && t.stop_rule == "running_best")
            st.fail("target_metric", "needs stop.rule: improvement (running_best is kept for the runs trained with it)");
        st.finish();
    }
    t.valid_bleu = o.get_bool("valid_bleu", t.valid_bleu);
    o.finish();
}

void read_eval(YamlOptions& o, EvalConfig& e, const DataConfig& d, const ModelConfig& m) {
    e.beam = o.get_int("beam", e.beam, 1, 64);  // a beam is memory x beam: bounded up front
    e.alpha = o.get_number("alpha", e.alpha, 0, kInf, false, false);
    e.max_len_a = o.get_number("max_len_a", e.max_len_a, 0, kInf, false, false);
    e.max_len_b = o.get_int("max_len_b", e.max_len_b, 0, kNoMax);
    e.batch_tokens = o.get_int("batch_tokens", e.batch_tokens, 1, kNoMax);
    // Unless given, evaluate every split the data defines, so overriding data.test_splits alone works.
    e.splits = o.get_string_list("splits", all_splits(d));
    // Unless given, the metrics the task declares for the model family (TaskDataSchema::default_metrics);
    // else BLEU for an encoder-decoder, exact match and extension ratio for the other families.
    if (m.family != "encoder_decoder") e.metrics = {"accuracy", "extension_ratio"};
    if (const TaskDataSchema* task = task_data_schema(d.task); task && task->default_metrics.count(m.family))
        e.metrics = task->default_metrics.at(m.family);
    e.metrics = o.get_string_list("metrics", e.metrics, kMetrics);
    o.finish();
}

void read_sweep(YamlOptions& o, SweepConfig& s) {
    YamlOptions grid = o.section("grid");
    const std::vector<std::string> keys = grid.keys();
    for (const auto& key : keys) {
        const YAML::Node values = grid.get_node(key);
        const std::string full = grid.key_path(key);
        const auto parts = split_key(key);
        if (!parts)
            grid.fail(key, fmt::format("is not {} naming the config key to sweep", kKeyExample));
        if (std::find(kUnsweepable.begin(), kUnsweepable.end(), (*parts)[0].name) != kUnsweepable.end())
            grid.fail(key, "cannot be swept: it describes the experiment, not a run (sweep keys under data, model, "
                           "train, eval, or seed)");
        if (!values.IsSequence() || values.size() == 0)
            grid.fail(key, fmt::format("must be a non-empty list of the values to try, e.g. [0.1, 0.3], got {}",
                                       describe_node(values)));
        SweepAxis axis;
        axis.key = key;
        std::vector<std::string> seen;
        for (std::size_t j = 0; j < values.size(); ++j) {
            const YAML::Node v = values[j];
            const std::string item_key = fmt::format("{}[{}]", full, j);
            const std::string text = value_yaml(v);
            if (std::find(seen.begin(), seen.end(), text) != seen.end())
                grid.fail_at(v, item_key, fmt::format("repeats the value {}", value_text(v)));
            seen.push_back(text);
            axis.values.push_back(v);
            axis.value_locations.push_back(grid.location(v, item_key));
        }
        for (const auto& other : s.grid)
            if (key_contains(other.key, key) || key_contains(key, other.key))
                grid.fail(key, fmt::format("overlaps sweep.grid.{}: sweep a key or keys under it, not both", other.key));
        s.grid.push_back(std::move(axis));
    }
    grid.finish();
    s.seeds = o.get_int_list("seeds", {}, 0, kNoMax);
    for (std::size_t i = 0; i < s.seeds.size(); ++i)
        for (std::size_t j = 0; j < i; ++j)
            if (s.seeds[i] == s.seeds[j]) o.fail("seeds", fmt::format("repeats the seed {}", s.seeds[i]));
    if (!s.seeds.empty())
        for (const auto& axis : s.grid)
            if (axis.key == "seed")
                o.fail("seeds", "cannot be combined with 'seed' in sweep.grid: list the seeds in one place");
    o.finish();
}

void read_report(YamlOptions& o, ReportConfig& r) {
    r.title = o.get_string("title", r.title);
    r.rows = o.get_string("rows", r.rows);
    r.columns = o.get_string("columns", r.columns);
    r.metrics = o.get_string_list("metrics", r.metrics);
    if (o.has("reference")) {
        YamlOptions ref = o.section("reference");
        ReferenceColumn col;
        col.title = ref.get_string("title", col.title);
        YamlOptions values = ref.section("values");
        for (const auto& label : values.keys())
            col.values[label] = values.get_number(label, 0, -kInf, kInf, false, false);
        values.finish();
        ref.finish();
        r.reference = col;
    } else {
        o.declare("reference", "map", "", "");
    }
    r.plots = o.get_string_list("plots", r.plots, kPlots);
    r.baseline = o.get_string("baseline", r.baseline);
    r.bootstrap = o.get_int("bootstrap", r.bootstrap, 0, 100000);
    if (const YAML::Node c = o.get_node("contrasts"); o.has("contrasts")) {
        const char* form = "must be a list of [row, other row] pairs, e.g. [[\"4\", \"16\"]] (each row minus the other)";
        if (!c.IsSequence()) o.fail("contrasts", form);
        r.contrasts.clear();
        for (std::size_t i = 0; i < c.size(); ++i) {
            if (!c[i].IsSequence() || c[i].size() != 2 || !c[i][0].IsScalar() || !c[i][1].IsScalar())
                o.fail("contrasts", fmt::format("{}; entry {} is {}", form, i + 1, describe_node(c[i])));
            r.contrasts.emplace_back(c[i][0].Scalar(), c[i][1].Scalar());
        }
    }
    if (o.has("compare")) {
        YamlOptions cmp = o.section("compare");
        r.compare_dir = cmp.require_string("dir", "the results directory of the experiment to set beside this one");
        r.compare_title = cmp.get_string("title", r.compare_dir);
        cmp.finish();
    }
    r.length_buckets = o.get_int_list("length_buckets", r.length_buckets, 1, 100000);
    for (std::size_t i = 1; i < r.length_buckets.size(); ++i)
        if (r.length_buckets[i] <= r.length_buckets[i - 1])
            o.fail("length_buckets", "must be increasing upper edges, e.g. [10, 20] for 1-10, 11-20 and 21+ tokens");
    o.finish();
}

// Rules across keys, checked after every key was read, so a misspelt key is reported as such rather than
// as a consequence of its default.
void cross_check(const ExperimentConfig& c, YamlOptions& data, YamlOptions& model, YamlOptions& eval,
                 YamlOptions& report, const LoadFlags& flags) {
    const auto& m = c.model;
    if (m.d_model % m.heads != 0) {
        // Blame the key the user changed last: an override of d_model against the file's heads names d_model.
        const bool blame_d_model = (!model.has("heads") && model.has("d_model")) ||
                                   (model.from_override("d_model") && !model.from_override("heads"));
        if (blame_d_model)
            model.fail("d_model", fmt::format("must be a multiple of model.heads = {}, got {} ({} % {} = {})", m.heads,
                                              m.d_model, m.d_model, m.heads, m.d_model % m.heads));
        model.fail("heads", fmt::format("must divide model.d_model = {}, got {} ({} % {} = {})", m.d_model, m.heads,
                                        m.d_model, m.heads, m.d_model % m.heads));
    }
    const auto& d = c.data;
    if (d.src == d.tgt) data.fail(data.has("tgt") ? "tgt" : "src", fmt::format("must differ from the other language (both are '{}')", d.src));
    const TaskDataSchema* task = task_data_schema(d.task);
    if (flags.check_paths && task && task->reads_dir) {
        std::error_code ec;
        if (!std::filesystem::is_directory(d.dir, ec)) {
            const bool exists = std::filesystem::exists(d.dir, ec);
            data.fail("dir", fmt::format("{} '{}' {} (task {} reads its files from there; a relative path "
                                         "starts at the working directory {})",
                                         exists ? "path" : "directory", d.dir,
                                         exists ? "is not a directory" : "does not exist", d.task,
                                         std::filesystem::current_path(ec).string()) +
                                 task->missing_dir_hint);
        }
    }
    const auto splits = all_splits(d);
    for (const auto& s : c.eval.splits)
        if (s != "train" && std::find(splits.begin(), splits.end(), s) == splits.end()) {
            std::string what = fmt::format("'{}' is not a split of the data (data.valid_split and data.test_splits "
                                           "give {}; train is also allowed)", s, join(splits));
            if (auto dm = nn::did_you_mean(s, splits)) what += fmt::format("; did you mean '{}'?", *dm);
            eval.fail("splits", what);
        }

    const auto& r = c.report;
    std::vector<std::string> axes;
    for (const auto& a : c.sweep.grid) axes.push_back(a.key);
    for (const char* key : {"rows", "columns"}) {
        const std::string& v = key == std::string("rows") ? r.rows : r.columns;
        for (const auto& part : report_axis_parts(v)) {
            if (std::find(axes.begin(), axes.end(), part) != axes.end()) continue;
            std::string what = axes.empty()
                                   ? fmt::format("must be \"\" because sweep.grid is empty, got '{}'", v)
                                   : fmt::format("must be a sweep.grid key ({}), several joined by '+', or \"\", got '{}'",
                                                 join(axes), v);
            if (auto dm = nn::did_you_mean(part, axes)) what += fmt::format(" (did you mean '{}'?)", *dm);
            report.fail(key, what);
        }
    }
    if (!r.rows.empty() && r.rows == r.columns)
        report.fail("columns", fmt::format("must differ from report.rows (both are '{}')", r.rows));
    for (const auto& part : report_axis_parts(r.columns)) {
        const auto rp = report_axis_parts(r.rows);
        if (std::find(rp.begin(), rp.end(), part) != rp.end())
            report.fail("columns", fmt::format("'{}' is in report.rows too; an axis is either rows or columns", part));
    }
    const std::vector<std::string> row_labels = report_axis_labels(c, r.rows);  // as the table shows them
    if (!r.baseline.empty()) {
        if (r.rows.empty()) report.fail("baseline", "needs report.rows: it names the row the others are compared with");
        if (!r.columns.empty()) report.fail("baseline", "works on tables without report.columns");
        const auto& labels = row_labels;
        if (std::find(labels.begin(), labels.end(), r.baseline) == labels.end()) {
            std::string what = fmt::format("must be one of the rows ({}), got '{}'", join(labels), r.baseline);
            if (auto dm = nn::did_you_mean(r.baseline, labels)) what += fmt::format(" (did you mean '{}'?)", *dm);
            report.fail("baseline", what);
        }
    }
    if (!r.contrasts.empty()) {
        if (r.rows.empty()) report.fail("contrasts", "needs report.rows: each entry names two of its rows");
        if (!r.columns.empty()) report.fail("contrasts", "works on tables without report.columns");
        const auto& labels = row_labels;
        for (std::size_t i = 0; i < r.contrasts.size(); ++i)
            for (const std::string* row : {&r.contrasts[i].first, &r.contrasts[i].second}) {
                if (std::find(labels.begin(), labels.end(), *row) != labels.end()) continue;
                std::string what = fmt::format("entry {} names '{}', which is not one of the rows ({})", i + 1, *row, join(labels));
                if (auto dm = nn::did_you_mean(*row, labels)) what += fmt::format(" (did you mean '{}'?)", *dm);
                report.fail("contrasts", what);
            }
        for (std::size_t i = 0; i < r.contrasts.size(); ++i)
            if (r.contrasts[i].first == r.contrasts[i].second)
                report.fail("contrasts", fmt::format("entry {} compares row '{}' with itself", i + 1, r.contrasts[i].first));
    }
    for (const auto& name : r.metrics) {
        const auto dot = name.rfind('.');
        if (dot == std::string::npos || dot == 0 || dot + 1 == name.size())
            report.fail("metrics", fmt::format("entries must be <split>.<metric>, e.g. test2016.bleu_tok, got '{}'", name));
        const std::string split = name.substr(0, dot), metric = name.substr(dot + 1);
        if (std::find(c.eval.splits.begin(), c.eval.splits.end(), split) == c.eval.splits.end())
            report.fail("metrics", fmt::format("'{}' names split '{}', which eval.splits ({}) does not evaluate", name,
                                               split, join(c.eval.splits)));
        // "<metric>@<n>": a metric a task writes per length (ppl@128, accuracy@12)
        const auto at = metric.find('@');
        const std::string base = metric.substr(0, at);
        if (at != std::string::npos &&
            (at + 1 == metric.size() || metric.find_first_not_of("0123456789", at + 1) != std::string::npos))
            report.fail("metrics", fmt::format("'{}': a length after '@' must be an integer, e.g. test.ppl@128", name));
        if (std::find(c.eval.metrics.begin(), c.eval.metrics.end(), base) == c.eval.metrics.end())
            report.fail("metrics", fmt::format("'{}' names metric '{}', which eval.metrics ({}) does not compute", name,
                                               base, join(c.eval.metrics)));
    }
}

ExperimentConfig parse_tree(const YAML::Node& root, const std::string& file,
                            const std::shared_ptr<const ValueOrigins>& origins, const LoadFlags& flags) {
    YamlOptions top(root, file, "", origins);
    ExperimentConfig c;
    c.source = file;
    c.name = top.require_string("name", "it names the results directory <results_dir>/<name>/");
    // At most 100 characters: it names a directory, and file systems refuse names over 255 bytes.
    if (c.name.size() > 100)
        top.fail("name", fmt::format("must be at most 100 characters (it names the results directory), got {}",
                                     c.name.size()));
    const bool name_ok = !c.name.empty() && c.name != "." && c.name != ".." &&
                         std::all_of(c.name.begin(), c.name.end(), [](char ch) { return is_name_char(ch) || ch == '.'; });
    if (!name_ok)
        top.fail("name", fmt::format("must be letters, digits, '_', '.' and '-' only (it names the results "
                                     "directory), got '{}'", c.name));
    c.description = top.get_string("description", c.description);
    c.results_dir = top.get_string("results_dir", c.results_dir);
    if (c.results_dir.empty()) top.fail("results_dir", "must not be empty (use . for the working directory)");
    c.run_store = top.get_string("run_store", c.run_store);
    c.seed = top.get_int("seed", c.seed, 0, kNoMax);
    c.threads = top.get_int("threads", c.threads, 1, 1024);
    YamlOptions data = top.section("data");
    read_data(data, c.data);
    YamlOptions model = top.section("model");
    read_model(model, c.model, file, origins);
    YamlOptions train = top.section("train");
    read_train(train, c.train);
    YamlOptions eval = top.section("eval");
    read_eval(eval, c.eval, c.data, c.model);
    YamlOptions sweep = top.section("sweep");
    read_sweep(sweep, c.sweep);
    YamlOptions report = top.section("report");
    read_report(report, c.report);
    top.finish();
    if (flags.cross_checks) cross_check(c, data, model, eval, report, flags);
    return c;
}

// ---- writing

void emit_double(YAML::Emitter& out, double v) {
    // fmt's "{}" is the shortest text that reads back as the same double (0.1, not 0.10000000000000001).
    out << fmt::format("{}", v);
}

void emit_strings(YAML::Emitter& out, const std::vector<std::string>& items) {
    out << YAML::Flow << YAML::BeginSeq;
    for (const auto& s : items) out << s;
    out << YAML::EndSeq;
}

// Canonical form of one encoding: `type` first, the other options sorted, so that key order in the file
// does not change the hash. Sorted through a std::map of clones: YAML::Node's operator= writes into the
// node a handle refers to, so std::sort over (key, Node) pairs rewrote the config's own options (found
// by fuzz/fuzz_config.cpp: {type: shaw, values: false, k: 3} became k: false).
YAML::Node canonical_position(const PositionSpec& p) {
    std::map<std::string, YAML::Node> rest;
    if (p.node.IsMap())
        for (auto it = p.node.begin(); it != p.node.end(); ++it)
            if (it->first.Scalar() != "type") rest.emplace(it->first.Scalar(), YAML::Clone(it->second));
    YAML::Node out(YAML::NodeType::Map);
    out["type"] = p.type;
    for (const auto& [k, v] : rest) out[k] = v;
    return out;
}

// for_hash: the text config_hash reads, where keys added later are left out at the value that means what
// configs before them computed; the write-out (to_yaml) states every value, so that it reads back the same.
void emit_run_part(YAML::Emitter& out, const ExperimentConfig& c, bool for_hash) {
    using namespace YAML;
    out << Key << "seed" << Value << c.seed;

    const auto& d = c.data;
    out << Key << "data" << Value << BeginMap;
    out << Key << "task" << Value << d.task;
    out << Key << "dir" << Value << d.dir;
    out << Key << "src" << Value << d.src;
    out << Key << "tgt" << Value << d.tgt;
    out << Key << "tokenized" << Value << d.tokenized;
    out << Key << "vocab_size" << Value << d.vocab_size;
    out << Key << "subword_model" << Value << d.subword_model;
    out << Key << "max_len" << Value << d.max_len;
    out << Key << "max_train_examples" << Value << d.max_train_examples;
    out << Key << "valid_split" << Value << d.valid_split;
    out << Key << "test_splits" << Value;
    emit_strings(out, d.test_splits);
    const auto& s = d.synthetic;
    // Written only for the tasks that are named by it, so configs from before data.lm keep their hash.
    if (task_names_runs_by(d.task, "lm")) {
        const auto& l = d.lm;
        out << Key << "lm" << Value << BeginMap;
        out << Key << "context" << Value << l.context;
        out << Key << "eval_lengths" << Value << Flow << BeginSeq;
        for (long n : l.eval_lengths) out << n;
        out << EndSeq;
        out << Key << "stride" << Value << l.stride;
        out << Key << "max_eval_tokens" << Value << l.max_eval_tokens;
        out << EndMap;
    }
    out << Key << "synthetic" << Value << BeginMap;
    out << Key << "n_symbols" << Value << s.n_symbols;
    out << Key << "train_size" << Value << s.train_size;
    out << Key << "valid_size" << Value << s.valid_size;
    out << Key << "test_size" << Value << s.test_size;
    out << Key << "train_len" << Value << Flow << BeginSeq << s.train_len.min << s.train_len.max << EndSeq;
    out << Key << "test_len" << Value << Flow << BeginSeq << s.test_len.min << s.test_len.max << EndSeq;
    out << EndMap;
    out << EndMap;

    const auto& m = c.model;
    out << Key << "model" << Value << BeginMap;
    if (m.family != "encoder_decoder") out << Key << "family" << Value << m.family;  // (hash of older configs kept)
    out << Key << "d_model" << Value << m.d_model;
    out << Key << "heads" << Value << m.heads;
    out << Key << "d_ff" << Value << m.d_ff;
    out << Key << "encoder_layers" << Value << m.encoder_layers;
    out << Key << "decoder_layers" << Value << m.decoder_layers;
    out << Key << "dropout" << Value;
    emit_double(out, m.dropout);
    out << Key << "attention_dropout" << Value;
    emit_double(out, m.attention_dropout);
    out << Key << "norm" << Value << m.norm;
    out << Key << "share_embeddings" << Value << m.share_embeddings;
    out << Key << "scale_embeddings" << Value << m.scale_embeddings;
    out << Key << "position" << Value;
    if (m.position.size() == 1) {
        out << canonical_position(m.position[0]);
    } else {
        out << (m.position.empty() ? Flow : Block) << BeginSeq;
        for (const auto& p : m.position) out << canonical_position(p);
        out << EndSeq;
    }
    out << EndMap;

    const auto& t = c.train;
    out << Key << "train" << Value << BeginMap;
    out << Key << "epochs" << Value << t.epochs;
    out << Key << "max_steps" << Value << t.max_steps;
    out << Key << "batch_tokens" << Value << t.batch_tokens;
    out << Key << "lr" << Value;
    emit_double(out, t.lr);
    out << Key << "warmup" << Value << t.warmup;
    out << Key << "label_smoothing" << Value;
    emit_double(out, t.label_smoothing);
    out << Key << "clip_norm" << Value;
    emit_double(out, t.clip_norm);
    out << Key << "adam_beta1" << Value;
    emit_double(out, t.adam_beta1);
    out << Key << "adam_beta2" << Value;
    emit_double(out, t.adam_beta2);
    out << Key << "adam_eps" << Value;
    emit_double(out, t.adam_eps);
    out << Key << "eval_every" << Value << t.eval_every;
    out << Key << "checkpoint_every" << Value << t.checkpoint_every;
    out << Key << "on_nonfinite" << Value << t.on_nonfinite;
    out << Key << "time_limit_minutes" << Value;
    emit_double(out, t.time_limit_minutes);
    // Written only when used, so configs from before these keys keep their config hash (finished
    // runs stay matched and skipped).
    // The rule is written unless it is running_best, the only rule before the key existed; a target
    // only when set.
    if (t.patience > 0 || !t.target_metric.empty()) {
        out << Key << "stop" << Value << Flow << BeginMap << Key << "patience" << Value << t.patience << Key
            << "min_delta" << Value;
        emit_double(out, t.min_delta);
        if (!for_hash || t.stop_rule != "running_best") out << Key << "rule" << Value << t.stop_rule;
        if (!t.target_metric.empty()) {
            out << Key << "target_metric" << Value << t.target_metric << Key << "target" << Value;
            emit_double(out, t.target);
        }
        out << EndMap;
    }
    if (t.valid_bleu) out << Key << "valid_bleu" << Value << true;
    out << EndMap;

    const auto& e = c.eval;
    out << Key << "eval" << Value << BeginMap;
    out << Key << "beam" << Value << e.beam;
    out << Key << "alpha" << Value;
    emit_double(out, e.alpha);
    out << Key << "max_len_a" << Value;
    emit_double(out, e.max_len_a);
    out << Key << "max_len_b" << Value << e.max_len_b;
    out << Key << "batch_tokens" << Value << e.batch_tokens;
    out << Key << "splits" << Value;
    emit_strings(out, e.splits);
    out << Key << "metrics" << Value;
    emit_strings(out, e.metrics);
    out << EndMap;
}

}  // namespace

// ---- public

std::vector<KeyRecord> describe_config_keys() {
    KeyRecorder rec;
    LoadFlags flags;
    flags.check_paths = false;
    flags.cross_checks = false;
    // The optional sections are present (empty) so that their keys are read too.
    parse_tree(YAML::Load("{name: defaults, train: {stop: {}}, report: {reference: {}, compare: {dir: \"<dir>\"}}}"),
               "<defaults>", nullptr, flags);
    return rec.keys;
}

std::vector<PositionSpec> default_position() {
    PositionSpec p;
    p.type = "sinusoidal";
    p.node = YAML::Node(YAML::NodeType::Map);
    p.node["type"] = "sinusoidal";
    p.key = "model.position[0]";
    return {p};
}

YamlOptions PositionSpec::options() const {
    YamlOptions o(node, file, key, origins);
    o.mark_used("type");
    return o;
}

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

std::string to_yaml(const ExperimentConfig& c) {
    using namespace YAML;
    Emitter out;
    out << BeginMap;
    out << Key << "name" << Value << c.name;
    out << Key << "description" << Value << c.description;
    out << Key << "results_dir" << Value << c.results_dir;
    if (!c.run_store.empty()) out << Key << "run_store" << Value << c.run_store;
    out << Key << "threads" << Value << c.threads;
    emit_run_part(out, c, false);

    out << Key << "sweep" << Value << BeginMap;
    out << Key << "grid" << Value;
    if (c.sweep.grid.empty()) {
        out << Flow << BeginMap << EndMap;
    } else {
        out << BeginMap;
        for (const auto& axis : c.sweep.grid) {
            out << Key << axis.key << Value << Flow << BeginSeq;
            for (const auto& v : axis.values) out << v;
            out << EndSeq;
        }
        out << EndMap;
    }
    out << Key << "seeds" << Value << Flow << BeginSeq;
    for (long s : c.sweep.seeds) out << s;
    out << EndSeq;
    out << EndMap;

    const auto& r = c.report;
    out << Key << "report" << Value << BeginMap;
    out << Key << "title" << Value << r.title;
    out << Key << "rows" << Value << r.rows;
    out << Key << "columns" << Value << r.columns;
    out << Key << "metrics" << Value;
    emit_strings(out, r.metrics);
    if (r.reference) {
        out << Key << "reference" << Value << BeginMap;
        out << Key << "title" << Value << r.reference->title;
        out << Key << "values" << Value;
        if (r.reference->values.empty()) {
            out << Flow << BeginMap << EndMap;
        } else {
            out << BeginMap;
            for (const auto& [label, v] : r.reference->values) {
                out << Key << label << Value;
                emit_double(out, v);
            }
            out << EndMap;
        }
        out << EndMap;
    }
    out << Key << "plots" << Value;
    emit_strings(out, r.plots);
    out << Key << "baseline" << Value << r.baseline;
    out << Key << "contrasts" << Value << Flow << BeginSeq;
    for (const auto& [a, b] : r.contrasts) out << Flow << BeginSeq << a << b << EndSeq;
    out << EndSeq;
    out << Key << "bootstrap" << Value << r.bootstrap;
    out << Key << "length_buckets" << Value << Flow << BeginSeq;
    for (long e : r.length_buckets) out << e;
    out << EndSeq;
    if (!r.compare_dir.empty())
        out << Key << "compare" << Value << Flow << BeginMap << Key << "dir" << Value << r.compare_dir << Key << "title"
            << Value << r.compare_title << EndMap;
    out << EndMap;
    out << EndMap;
    return std::string(out.c_str()) + "\n";
}

std::string config_hash(const ExperimentConfig& c) {
    YAML::Emitter out;
    out << YAML::BeginMap;
    emit_run_part(out, c, true);
    out << YAML::EndMap;
    return fnv1a64_hex(out.c_str());
}

std::string section_yaml(const ExperimentConfig& c, const std::string& section) {
    YAML::Emitter out;
    out << YAML::BeginMap;
    emit_run_part(out, c, true);
    out << YAML::EndMap;
    return value_yaml(YAML::Load(out.c_str())[section]);
}

std::string value_text(const YAML::Node& value) {
    if (!value.IsDefined() || value.IsNull()) return "null";
    if (value.IsScalar()) return value.Scalar();
    return value_yaml(value);
}

std::vector<std::string> report_axis_parts(const std::string& key) {
    std::vector<std::string> parts;
    std::size_t at = 0;
    while (!key.empty() && at <= key.size()) {
        const std::size_t plus = std::min(key.find('+', at), key.size());
        std::string p = key.substr(at, plus - at);
        p.erase(0, p.find_first_not_of(' '));
        p.erase(p.find_last_not_of(' ') + 1);
        parts.push_back(p);
        at = plus + 1;
    }
    return parts;
}

std::vector<std::string> report_axis_labels(const ExperimentConfig& cfg, const std::string& key) {
    std::vector<std::string> labels;
    const auto parts = report_axis_parts(key);
    for (std::size_t i = 0; i < parts.size(); ++i) {
        std::vector<std::string> own;
        for (const auto& a : cfg.sweep.grid)
            if (a.key == parts[i])
                for (const auto& v : a.values) own.push_back(value_text(v));
        if (i == 0) {
            labels = own;
            continue;
        }
        std::vector<std::string> joined;
        for (const auto& l : labels)
            for (const auto& o : own) joined.push_back(l + kAxisLabelJoin + o);
        labels = std::move(joined);
    }
    return labels;
}

std::string value_yaml(const YAML::Node& value) {
    YAML::Emitter out;
    out.SetMapFormat(YAML::Flow);
    out.SetSeqFormat(YAML::Flow);
    out << value;
    return out.c_str();
}

std::string fnv1a64_hex(const std::string& text) {
    std::uint64_t h = 14695981039346656037ull;
    for (unsigned char ch : text) {
        h ^= ch;
        h *= 1099511628211ull;
    }
    return fmt::format("{:016x}", h);
}

}  // namespace relpos
