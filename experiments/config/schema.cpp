// The config schema: each section's keys read with their types, defaults and allowed values (through
// YamlOptions, which also records them for `relpos list --keys`), and the rules across keys.
#include "experiments/config/config.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include <fmt/format.h>
#include <map>
#include <mutex>

#include "experiments/config/schema.hpp"
#include "experiments/tasks/metric_names.hpp"
#include "experiments/util/system.hpp"
#include "experiments/util/text.hpp"
#include "nn/printable.hpp"

namespace relpos {

namespace {

constexpr long kNoMax = std::numeric_limits<long>::max();
constexpr double kInf = std::numeric_limits<double>::infinity();

const std::vector<std::string> kLanguages{"de", "en"};
// Every metric some task computes; which task computes which is checked by make_task (experiments/tasks).
const std::vector<std::string> kMetrics{"bleu",        "bleu_tok", "loss",           "ppl", "accuracy", "token_accuracy",
                                        "ppl_sliding", "loss_by_position", "extension_ratio"};
const std::vector<std::string> kPlots{"learning_curves", "metric_vs_row", "attention", "metric_vs_length"};
// Keys that describe the experiment rather than one run: sweeping them would not change a run or would
// move runs out of the experiment's directory.
const std::vector<std::string> kUnsweepable{"name", "description", "results_dir", "run_store", "sweep", "report"};

// Metrics that are percentages (0-100), the targets train.stop.target is checked against; "token_accuracy@mean"
// and other "@..." forms are the same metric.
bool is_percentage_metric(const std::string& metric) {
    const std::string base = metric.substr(0, metric.find('@'));
    return base == "accuracy" || base == "token_accuracy" || base == "bleu" || base == "bleu_tok";
}

std::vector<std::string> all_splits(const DataConfig& d) {
    std::vector<std::string> out{d.valid_split};
    for (const auto& s : d.test_splits)
        if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
    return out;
}

// The longest sequence a config may ask for (data.synthetic lengths, data.lm.context and eval_lengths): one
// attention matrix of 100,000 tokens is already 40 GB a head, so a longer one is a typo, not a plan (the
// memory check, experiments/tasks/sequence_limits.hpp, refuses shorter ones a machine cannot hold).
constexpr long kMaxSequenceLength = 100000;

// An integer in [min, max] written by hand-read keys (a [min, max] pair, a list of lengths): false for
// text that is not one, or one beyond 64 bits (strtol's ERANGE), or out of range.
bool parse_bounded_long(const YAML::Node& item, long min, long max, long& out) {
    const std::string s = item.IsScalar() ? item.Scalar() : "";
    if (s.empty() || std::isspace(static_cast<unsigned char>(s[0]))) return false;
    char* end = nullptr;
    errno = 0;
    out = std::strtol(s.c_str(), &end, 10);
    return *end == '\0' && errno != ERANGE && out >= min && out <= max;
}

LengthRange read_length_range(YamlOptions& o, const std::string& key, LengthRange def) {
    o.declare(key, "[min, max]", fmt::format("[{}, {}]", def.min, def.max),
              fmt::format("integers, 1 <= min <= max <= {}", kMaxSequenceLength));
    if (!o.has(key)) return def;
    const YAML::Node n = o.get_node(key);
    const std::string expect = fmt::format("must be [min, max] with integers 1 <= min <= max <= {}", kMaxSequenceLength);
    if (!n.IsSequence() || n.size() != 2) o.fail(key, fmt::format("{}, got {}", expect, value_text(n)));
    LengthRange r;
    long* out[2] = {&r.min, &r.max};
    for (std::size_t i = 0; i < 2; ++i) {
        const YAML::Node item = n[i];
        long v = 0;
        if (!parse_bounded_long(item, 1, kMaxSequenceLength, v))
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
    l.context = o.get_int("context", l.context, 2, kMaxSequenceLength);
    {
        std::string def;
        for (long v : l.eval_lengths) def += (def.empty() ? "" : ", ") + std::to_string(v);
        o.declare("eval_lengths", "list of ints", "[" + def + "]", fmt::format("non-empty, each in [2, {}]", kMaxSequenceLength));
    }
    if (o.has("eval_lengths")) {
        const YAML::Node n = o.get_node("eval_lengths");
        const std::string expect =
            fmt::format("must be a non-empty list of integers in [2, {}] (window lengths)", kMaxSequenceLength);
        if (!n.IsSequence() || n.size() == 0) o.fail("eval_lengths", fmt::format("{}, got {}", expect, value_text(n)));
        l.eval_lengths.clear();
        for (std::size_t i = 0; i < n.size(); ++i) {
            long v = 0;
            if (!parse_bounded_long(n[i], 2, kMaxSequenceLength, v))
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

// A task's data defaults: DataConfig's own, but for the task's data directory and test splits (its registry
// entry's). read_data starts from them, and refuse_unread_keys compares a config's values with them.
DataConfig task_data_defaults(const std::string& task) {
    DataConfig d;
    d.task = task;
    if (const TaskDataSchema* s = task_data_schema(task); s && !s->dir.empty()) d.dir = s->dir;
    d.test_splits = default_test_splits(task);
    return d;
}

// A data key set away from its default for a task that does not read it (the keys of its registry options,
// `relpos list`) is refused at its line: it would change nothing but the run's name. Keys every task reads
// (every_task_reads) pass; at its default a key passes, as every written-out run config has them all. Values
// are compared as to_yaml writes them, so a key added to DataConfig is covered once it is written.
void refuse_unread_keys(YamlOptions& o, const DataConfig& d) {
    if (task_names().empty()) return;  // no tasks room linked in: nothing to check against
    const std::vector<std::string> keys = task_data_keys(d.task);
    const auto reads = [&](const std::string& k) { return std::find(keys.begin(), keys.end(), k) != keys.end(); };
    const auto what = [&] {
        return fmt::format("task '{}' does not read it (the data keys it reads: {}; `relpos list` shows every task's)",
                           d.task, keys.empty() ? std::string("none") : join(keys));
    };
    const YAML::Node now = data_yaml(d), def = data_yaml(task_data_defaults(d.task));
    const auto differs = [](const YAML::Node& a, const YAML::Node& b) { return YAML::Dump(a) != YAML::Dump(b); };
    for (auto it = now.begin(); it != now.end(); ++it) {
        const std::string key = it->first.Scalar();
        if (every_task_reads(key) || !o.has(key)) continue;
        if (!it->second.IsMap()) {
            if (!reads(key) && differs(it->second, def[key])) o.fail(key, what());
            continue;
        }
        YamlOptions sec = o.section(key);
        for (auto f = it->second.begin(); f != it->second.end(); ++f) {
            const std::string sub = f->first.Scalar();
            if (sec.has(sub) && !reads(key + "." + sub) && differs(f->second, def[key][sub])) sec.fail(sub, what());
        }
    }
}

void read_data(YamlOptions& o, DataConfig& d) {
    d.task = o.get_string("task", d.task);
    if (d.task.empty()) o.fail("task", "must name a registered task (relpos list shows them)");
    const TaskDataSchema* task = task_data_schema(d.task);  // nullptr: unknown
    if (const auto names = task_names(); !task && !names.empty()) {  // at its line (or override), as any value
        const auto s = nn::did_you_mean(d.task, names);
        o.fail("task", fmt::format("'{}' is not a registered task{}; registered: {}", d.task,
                                   s ? fmt::format(" (did you mean '{}'?)", *s) : "", join(names)));
    }
    const DataConfig def = task_data_defaults(d.task);
    d.dir = o.get_string("dir", def.dir);
    d.src = o.get_string("src", d.src, kLanguages);
    d.tgt = o.get_string("tgt", d.tgt, kLanguages);
    d.tokenized = o.get_bool("tokenized", d.tokenized);
    d.vocab_size = o.get_int("vocab_size", d.vocab_size, 100, 64000);
    d.subword_model = o.get_string("subword_model", d.subword_model, {"unigram", "bpe"});
    d.max_len = o.get_int("max_len", d.max_len, 1, kNoMax);
    d.max_train_examples = o.get_int("max_train_examples", d.max_train_examples, 0, kNoMax);
    d.valid_split = o.get_string("valid_split", d.valid_split);
    if (d.valid_split.empty()) o.fail("valid_split", "must name a split, e.g. val");
    d.test_splits = o.get_string_list("test_splits", def.test_splits);  // the task's own (most: test)
    for (const auto& s : d.test_splits)
        if (s.empty()) o.fail("test_splits", "must not contain an empty split name");
    read_synthetic(o.section("synthetic"), d.synthetic);
    read_lm(o.section("lm"), d.lm);
    refuse_unread_keys(o, d);
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

// A model whose layers alone cannot fit in memory, refused at the key furthest above its default (its line or
// override) before anything is made; the embeddings wait for the data's vocabulary (build_model checks the
// whole model again).
void refuse_too_large_model(YamlOptions& o, const ModelConfig& m) {
    const double params = model_parameters(m, 0), need = training_bytes(params), have = physical_memory_bytes();
    if (need <= have) return;
    const ModelConfig def;
    std::vector<std::pair<std::string, double>> keys{{"d_model", double(m.d_model) / double(def.d_model)},
                                                     {"d_ff", double(m.d_ff) / double(def.d_ff)}};
    if (m.family != "decoder_only") keys.emplace_back("encoder_layers", double(m.encoder_layers) / double(def.encoder_layers));
    if (m.family != "encoder_only") keys.emplace_back("decoder_layers", double(m.decoder_layers) / double(def.decoder_layers));
    const auto blamed = std::max_element(keys.begin(), keys.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
    std::string sizes;
    for (const auto& k : keys) sizes += (sizes.empty() ? "model." : ", model.") + k.first;
    o.fail(blamed->first,
           fmt::format("a model with d_model {}, d_ff {} and {} has at least {:.3g} parameters in its layers and needs at "
                       "least {:.3g} GiB to train them (weights, gradients and Adam's two moments), more than this "
                       "machine's {:.0f} GiB; lower it (the sizes that count: {})",
                       m.d_model, m.d_ff, describe_layers(m), params, need / double(1 << 30), have / double(1 << 30), sizes));
}

void read_model(YamlOptions& o, ModelConfig& m, const std::string& file,
                const std::shared_ptr<const ValueOrigins>& origins) {
    m.family = o.get_string("family", m.family, {"encoder_decoder", "decoder_only", "encoder_only"});
    omit_from_run_name_at(o, "family", "encoder_decoder");  // came with decoder-only models
    m.d_model = o.get_int("d_model", m.d_model, 1, kNoMax);
    m.heads = o.get_int("heads", m.heads, 1, kNoMax);
    m.d_ff = o.get_int("d_ff", m.d_ff, 1, kNoMax);
    m.encoder_layers = o.get_int("encoder_layers", m.encoder_layers, 1, kNoMax);
    m.decoder_layers = o.get_int("decoder_layers", m.decoder_layers, 1, kNoMax);
    refuse_too_large_model(o, m);
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
        omit_from_run_name_at(st, "patience", "0");  // the stop section is named only when used
        t.min_delta = st.get_number("min_delta", t.min_delta, 0, kInf, false, false);
        t.stop_rule = st.get_string("rule", t.stop_rule, {"improvement", "running_best"});
        omit_from_run_name_at(st, "rule", "running_best");  // the only rule before the key existed
        t.target_metric = st.get_string("target_metric", t.target_metric);
        omit_from_run_name_at(st, "target_metric", "");
        t.target = st.get_number("target", t.target, -kInf, kInf, false, false);
        // A target outside the metric's range: above the top it is never reached (the run trains to its cap),
        // below the bottom the first validation reaches it. (0 and 100 stay: the tests' "at once" and "never".)
        if (is_percentage_metric(t.target_metric) && st.has("target") && (t.target < 0 || t.target > 100))
            st.fail("target", fmt::format("must be in [0, 100] for {} (a percentage: above 100 it is never reached, "
                                          "below 0 any model reaches it at the first validation), got {}",
                                          t.target_metric, st.get_node("target").Scalar()));
        if (t.target_metric.empty() && st.has("target"))
            st.fail("target", "needs stop.target_metric (the validation metric it is a target for, e.g. accuracy)");
        if (!t.target_metric.empty() && !st.has("target"))
            st.fail("target_metric", "needs stop.target (the value that counts as reached, e.g. 99)");
        if (!t.target_metric.empty() && t.stop_rule == "running_best")
            st.fail("target_metric", "needs stop.rule: improvement (running_best is kept for the runs trained with it)");
        st.finish();
    } else {
        o.declare("stop", "map", "", "");  // named among the known keys when absent (its keys are read above)
    }
    t.valid_bleu = o.get_bool("valid_bleu", t.valid_bleu);
    omit_from_run_name_at(o, "valid_bleu", "false");
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
    if (e.metrics.empty()) o.fail("metrics", "must list at least one metric: a run scores its splits on them");
    if (e.splits.empty()) o.fail("splits", "must list at least one split: a run is scored on them (e.g. [val, test])");
    YamlOptions per = o.section("split_metrics");
    for (const std::string& split : per.keys()) {
        if (std::find(e.splits.begin(), e.splits.end(), split) == e.splits.end()) {
            std::string what = fmt::format("names the split '{}', which is not one of eval.splits ({})", split, join(e.splits));
            if (auto dm = nn::did_you_mean(split, e.splits)) what += fmt::format(" (did you mean '{}'?)", *dm);
            per.fail(split, what);
        }
        auto list = per.get_string_list(split, {}, kMetrics);
        if (list.empty()) per.fail(split, "must list at least one metric (leave the split out to use eval.metrics)");
        e.split_metrics[split] = std::move(list);
    }
    per.finish();
    o.finish();
}

// sweep.cells: a list of maps, each a dotted key -> one value, all with the same keys; stored zipped, one
// SweepAxis per key (SweepConfig::cells).
void read_cells(YamlOptions& o, SweepConfig& s) {
    o.declare("cells", "list of maps", "[]",
              "each a map of dotted keys (as sweep.grid's) to one value, every cell the same keys, none in sweep.grid");
    const YAML::Node cells = o.get_node("cells");
    if (!cells || cells.IsNull()) return;
    const std::string full = o.key_path("cells");
    if (!cells.IsSequence() || cells.size() == 0)
        o.fail("cells", fmt::format("must be a non-empty list of maps from dotted keys to values, e.g. "
                                    "[{{model.position: {{type: rope}}, train.lr: 0.25}}], got {}", describe_node(cells)));
    std::vector<std::string> seen;  // each cell's values as text, to refuse a repeated cell
    for (std::size_t j = 0; j < cells.size(); ++j) {
        const std::string item_key = fmt::format("{}[{}]", full, j);
        if (!cells[j].IsMap() || cells[j].size() == 0)
            o.fail_at(cells[j], item_key, fmt::format("must be a map from dotted keys to one value each, e.g. "
                                                      "{{train.lr: 0.25}}, got {}", describe_node(cells[j])));
        YamlOptions cell(cells[j], o.file(), item_key);
        const std::vector<std::string> keys = cell.keys();
        if (j == 0) {
            for (const auto& key : keys) {
                const auto parts = split_key(key);
                if (!parts) cell.fail(key, fmt::format("is not {} naming the config key to set", kKeyExample));
                if (std::find(kUnsweepable.begin(), kUnsweepable.end(), (*parts)[0].name) != kUnsweepable.end())
                    cell.fail(key, "cannot be swept: it describes the experiment, not a run (sweep keys under data, "
                                   "model, train, eval, or seed)");
                for (const auto& other : s.cells)
                    if (key_contains(other.key, key) || key_contains(key, other.key))
                        cell.fail(key, fmt::format("overlaps {}: set a key or keys under it, not both", other.key));
                for (const auto& other : s.grid)
                    if (key_contains(other.key, key) || key_contains(key, other.key))
                        cell.fail(key, fmt::format("is swept by sweep.grid.{} too: a key is in the grid or in the "
                                                   "cells, not both", other.key));
                SweepAxis axis;
                axis.key = key;
                s.cells.push_back(std::move(axis));
            }
        } else {
            std::vector<std::string> want;
            for (const auto& a : s.cells) want.push_back(a.key);
            std::vector<std::string> have = keys, sorted_want = want;
            std::sort(have.begin(), have.end());
            std::sort(sorted_want.begin(), sorted_want.end());
            if (have != sorted_want)
                o.fail_at(cells[j], item_key, fmt::format("must set the same keys as the first cell ({}), got {}",
                                                          join(want), join(keys)));
        }
        std::string text;
        for (auto& axis : s.cells) {
            const YAML::Node v = cell.get_node(axis.key);
            axis.values.push_back(v);
            axis.value_locations.push_back(cell.location(v, cell.key_path(axis.key)));
            text += value_yaml(v) + "\n";
        }
        if (std::find(seen.begin(), seen.end(), text) != seen.end())
            o.fail_at(cells[j], item_key, "repeats an earlier cell");
        seen.push_back(text);
        cell.finish();
    }
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
    read_cells(o, s);
    s.seeds = o.get_int_list("seeds", {}, 0, kNoMax);
    for (std::size_t i = 0; i < s.seeds.size(); ++i)
        for (std::size_t j = 0; j < i; ++j)
            if (s.seeds[i] == s.seeds[j]) o.fail("seeds", fmt::format("repeats the seed {}", s.seeds[i]));
    s.only = o.get_string_list("only", s.only);
    for (std::size_t i = 0; i < s.only.size(); ++i) {
        if (s.only[i].empty()) o.fail("only", fmt::format("entry {} is empty; each is a pattern of run ids (as `relpos "
                                                          "run --only` takes), e.g. 'position=type-rope_*'", i + 1));
        for (std::size_t j = 0; j < i; ++j)
            if (s.only[i] == s.only[j]) o.fail("only", fmt::format("repeats the pattern '{}'", s.only[i]));
    }
    if (!s.seeds.empty()) {
        for (const auto& axis : s.grid)
            if (axis.key == "seed")
                o.fail("seeds", "cannot be combined with 'seed' in sweep.grid: list the seeds in one place");
        for (const auto& axis : s.cells)
            if (axis.key == "seed")
                o.fail("seeds", "cannot be combined with 'seed' in sweep.cells: list the seeds in one place");
    }
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
    } else {
        o.declare("compare", "map", "", "");  // as stop and reference
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
    for (const auto& a : c.sweep.cells) axes.push_back(a.key);
    for (const char* key : {"rows", "columns"}) {
        const std::string& v = key == std::string("rows") ? r.rows : r.columns;
        for (const auto& part : report_axis_parts(v)) {
            if (std::find(axes.begin(), axes.end(), part) != axes.end()) continue;
            std::string what = axes.empty()
                                   ? fmt::format("must be \"\" because sweep.grid and sweep.cells are empty, got '{}'", v)
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
        if (at != std::string::npos && metric.substr(at + 1) != "mean" &&
            (at + 1 == metric.size() || metric.find_first_not_of("0123456789", at + 1) != std::string::npos))
            report.fail("metrics", fmt::format("'{}': after '@' comes a length (an integer, e.g. test.ppl@128) or 'mean' "
                                               "(the mean over the lengths, e.g. test.token_accuracy@mean)", name));
        const auto& computed = c.eval.metrics_for(split);
        // loss_pos<N>@<p> (a language model's loss by position in windows of N tokens) comes from the
        // eval metric loss_by_position
        const std::size_t window = metric_names::loss_by_position_window(base);
        const bool by_position = window != 0;
        const std::string needs = by_position ? "loss_by_position" : base;
        if (std::find(computed.begin(), computed.end(), needs) == computed.end())
            report.fail("metrics", fmt::format("'{}' names metric '{}', which {} ({}) does not compute", name, needs,
                                               c.eval.split_metrics.count(split) ? "eval.split_metrics." + split : "eval.metrics",
                                               join(computed)));
        if (by_position) {
            const auto& lengths = c.data.lm.eval_lengths;
            if (std::find(lengths.begin(), lengths.end(), static_cast<long>(window)) == lengths.end())
                report.fail("metrics", fmt::format("'{}': windows of {} tokens are not among data.lm.eval_lengths ({})",
                                                   name, window, fmt::join(lengths, ", ")));
        }
    }
}


}  // namespace

std::string describe_layers(const ModelConfig& m) {
    if (m.family == "decoder_only") return fmt::format("{} decoder layers", m.decoder_layers);
    if (m.family == "encoder_only") return fmt::format("{} encoder layers", m.encoder_layers);
    return fmt::format("{} encoder and {} decoder layers", m.encoder_layers, m.decoder_layers);
}

double model_parameters(const ModelConfig& m, double vocab) {
    const double d = double(m.d_model), ff = double(m.d_ff), E = double(m.encoder_layers), D = double(m.decoder_layers);
    const bool decoder_only = m.family == "decoder_only", encoder_only = m.family == "encoder_only";
    return 2 * vocab * d + (decoder_only ? 0 : E * (4 * d * d + 2 * d * ff)) +
           (encoder_only ? 0 : D * ((decoder_only ? 4 : 8) * d * d + 2 * d * ff));
}

namespace {
std::mutex g_run_name_mutex;
std::map<std::string, std::string>& run_name_defaults() {
    static std::map<std::string, std::string> m;
    return m;
}
}  // namespace

void omit_from_run_name_at(const YamlOptions& o, const std::string& key, const std::string& value) {
    std::lock_guard<std::mutex> lock(g_run_name_mutex);  // configs are read on several threads (--jobs)
    run_name_defaults()[o.key_path(key)] = value;
}

bool at_run_name_default(const std::string& dotted_key, const std::string& value) {
    // Reading a config of defaults runs every declaration once (a config built in code was never read).
    static const bool declared = (describe_config_keys(), true);
    (void)declared;
    std::lock_guard<std::mutex> lock(g_run_name_mutex);
    const auto& m = run_name_defaults();
    const auto it = m.find(dotted_key);
    return it != m.end() && it->second == value;
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
    const auto& cells = cfg.sweep.cells;
    auto cell_axis = [&](const std::string& part) {
        return std::find_if(cells.begin(), cells.end(), [&](const SweepAxis& a) { return a.key == part; });
    };
    if (std::any_of(parts.begin(), parts.end(), [&](const std::string& p) { return cell_axis(p) != cells.end(); })) {
        // With sweep.cells: the combinations the points have, the grid's parts slowest (in the order of the
        // parts), then the cells' parts as the cells list them, each label once.
        std::vector<std::vector<std::string>> grid_combos{{}};
        for (const auto& part : parts) {
            if (cell_axis(part) != cells.end()) continue;
            std::vector<std::vector<std::string>> next;
            for (const auto& combo : grid_combos)
                for (const auto& a : cfg.sweep.grid)
                    if (a.key == part)
                        for (const auto& v : a.values) {
                            auto c = combo;
                            c.push_back(value_text(v));
                            next.push_back(c);
                        }
            grid_combos = std::move(next);
        }
        for (const auto& combo : grid_combos)
            for (std::size_t i = 0; i < cfg.sweep.cell_count(); ++i) {
                std::string label;
                std::size_t g = 0;
                for (std::size_t k = 0; k < parts.size(); ++k) {
                    const auto it = cell_axis(parts[k]);
                    label += (k ? kAxisLabelJoin : "") + (it != cells.end() ? value_text(it->values[i]) : combo[g++]);
                }
                if (std::find(labels.begin(), labels.end(), label) == labels.end()) labels.push_back(label);
            }
        return labels;
    }
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

}  // namespace relpos
