// Writing a config back: the resolved YAML (to_yaml), and the text that names a run (config_hash), where
// keys added after runs were finished are left out at the value that means what those runs computed.
#include "experiments/config/config.hpp"

#include <cstdint>
#include <map>

#include <fmt/format.h>

#include "experiments/config/schema.hpp"

namespace relpos {

namespace {

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

// The data section: every key, data.lm only with `lm` (written only for the tasks that are named by it, so
// configs from before data.lm keep their hash).
void emit_data(YAML::Emitter& out, const DataConfig& d, bool lm) {
    using namespace YAML;
    out << BeginMap;
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
    if (lm) {
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
    const auto& s = d.synthetic;
    out << Key << "synthetic" << Value << BeginMap;
    out << Key << "n_symbols" << Value << s.n_symbols;
    out << Key << "train_size" << Value << s.train_size;
    out << Key << "valid_size" << Value << s.valid_size;
    out << Key << "test_size" << Value << s.test_size;
    out << Key << "train_len" << Value << Flow << BeginSeq << s.train_len.min << s.train_len.max << EndSeq;
    out << Key << "test_len" << Value << Flow << BeginSeq << s.test_len.min << s.test_len.max << EndSeq;
    out << EndMap;
    out << EndMap;
}

// for_hash: the text config_hash reads, where keys added later are left out at the value that means what
// configs before them computed (each key declares that value where it is read: omit_from_run_name_at in
// schema.cpp; data sections: TaskDataSchema::named_sections). The write-out (to_yaml) leaves out only what
// it always has (model.family, train.valid_bleu, an unused stop section) and reads back the same.
void emit_run_part(YAML::Emitter& out, const ExperimentConfig& c, bool for_hash) {
    using namespace YAML;
    out << Key << "seed" << Value << c.seed;

    out << Key << "data" << Value;
    emit_data(out, c.data, task_names_runs_by(c.data.task, "lm"));

    const auto& m = c.model;
    out << Key << "model" << Value << BeginMap;
    if (!at_run_name_default("model.family", m.family)) out << Key << "family" << Value << m.family;
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
    // Written only when used (a key of it off its declared value), so configs from before these keys keep
    // their config hash (finished runs stay matched and skipped); the rule leaves the hash at its declared
    // value, a target is written only when set.
    if (!at_run_name_default("train.stop.patience", std::to_string(t.patience)) ||
        !at_run_name_default("train.stop.target_metric", t.target_metric)) {
        out << Key << "stop" << Value << Flow << BeginMap << Key << "patience" << Value << t.patience << Key
            << "min_delta" << Value;
        emit_double(out, t.min_delta);
        if (!for_hash || !at_run_name_default("train.stop.rule", t.stop_rule)) out << Key << "rule" << Value << t.stop_rule;
        if (!t.target_metric.empty()) {
            out << Key << "target_metric" << Value << t.target_metric << Key << "target" << Value;
            emit_double(out, t.target);
        }
        out << EndMap;
    }
    if (!at_run_name_default("train.valid_bleu", t.valid_bleu ? "true" : "false")) out << Key << "valid_bleu" << Value << true;
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
    if (!e.split_metrics.empty()) {  // written only when given: configs without it keep their hashes
        out << Key << "split_metrics" << Value << BeginMap;
        for (const auto& [split, metrics] : e.split_metrics) {
            out << Key << split << Value;
            emit_strings(out, metrics);
        }
        out << EndMap;
    }
    out << EndMap;
}


}  // namespace

YAML::Node data_yaml(const DataConfig& d) {
    YAML::Emitter out;
    emit_data(out, d, true);
    return YAML::Load(out.c_str());
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
    if (c.sweep.cell_count() > 0) {  // written only when given, so that configs without cells read as before
        out << Key << "cells" << Value << BeginSeq;
        for (std::size_t i = 0; i < c.sweep.cell_count(); ++i) {
            out << Flow << BeginMap;
            for (const auto& axis : c.sweep.cells) out << Key << axis.key << Value << axis.values[i];
            out << EndMap;
        }
        out << EndSeq;
    }
    out << Key << "seeds" << Value << Flow << BeginSeq;
    for (long s : c.sweep.seeds) out << s;
    out << EndSeq;
    if (!c.sweep.only.empty()) {  // written only when given, so that configs without it read as before
        out << Key << "only" << Value << BeginSeq;
        for (const auto& pattern : c.sweep.only) out << pattern;
        out << EndSeq;
    }
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
