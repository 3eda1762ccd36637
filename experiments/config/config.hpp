// Experiment configs: the YAML schema as typed structs with defaults, loading with command-line
// overrides, validation of every key (type, range, allowed values; unknown keys rejected at every level),
// and the resolved config written back as YAML plus a stable hash. docs/configs.md describes every key.
//
// Every user error is a ConfigError (or, from a plug-in reading its options later, an nn::OptionError)
// whose what() is one sentence: "<file>:<line>:<col>: <dotted.key>: <what is wrong and what is allowed>",
// with "command-line override 'key=value'" in place of file:line:col for overridden values. The CLI maps
// both to exit code 2. Nothing here writes files.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "experiments/config/task_schema.hpp"
#include "experiments/config/yaml_options.hpp"

namespace relpos {

struct ConfigError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// One entry of model.position: a position encoding's registered name and its options. The options are
// validated by the position-encoding registry (through options()), not here.
struct PositionSpec {
    std::string type;                             // registered name, e.g. "sinusoidal", "shaw"
    YAML::Node node;                              // the whole map, `type` included (treat as read-only)
    std::string file;                             // config file it came from (for messages)
    std::string key;                              // "model.position" (a single map) or "model.position[1]"
    std::shared_ptr<const ValueOrigins> origins;  // overrides applied to the file (for messages)

    // Options over `node`, with `type` already marked as read; errors name file:line:col and
    // "model.position.k". The factory reads its options and then calls finish().
    YamlOptions options() const;
};

// The default model.position: [{type: sinusoidal}].
std::vector<PositionSpec> default_position();

struct LengthRange {
    long min = 1;
    long max = 1;
};

struct SyntheticConfig {  // data.synthetic; only read by the tasks that generate their data
    long n_symbols = 20;      // >= 2
    long train_size = 10000;  // >= 1
    long valid_size = 500;    // >= 1
    long test_size = 1000;    // >= 1
    LengthRange train_len{5, 20};   // [min, max], 1 <= min <= max
    LengthRange test_len{21, 40};
};

struct LanguageModelConfig {  // data.lm; only read by language-model tasks
    long context = 64;                // >= 2: training sequence length (tokens)
    std::vector<long> eval_lengths{64, 128, 256, 512, 1024};  // each >= 2: evaluation window lengths
    long stride = 0;                  // >= 0: sliding-window step (tokens scored per window); 0 = half the window
    long max_eval_tokens = 0;         // >= 0: score only the first this many tokens of each split (0 = all)
};

struct DataConfig {
    std::string task = default_task();  // a registered task (relpos list); the default is the first registered
    // The task's files, for a task that reads files; must be a directory (relative to the working dir). Not
    // given: the task's own default (TaskDataSchema::dir).
    std::string dir = default_data_dir();
    std::string src = "de";           // de | en
    std::string tgt = "en";           // de | en, != src
    bool tokenized = true;            // bundled lowercased Moses-tokenized text
    long vocab_size = 8000;           // [100, 64000]
    std::string subword_model = "unigram";  // unigram | bpe
    long max_len = 100;               // >= 1: drop training pairs longer than this (subwords)
    long max_train_examples = 0;      // >= 0; 0 = all
    std::string valid_split = "val";
    std::vector<std::string> test_splits = default_test_splits(task);  // the task's own (TaskDataSchema)
    SyntheticConfig synthetic;
    LanguageModelConfig lm;
};

struct ModelConfig {
    std::string family = "encoder_decoder";  // encoder_decoder | decoder_only (decoder_layers layers, no encoder)
    long d_model = 256;          // >= 1, a multiple of heads
    long heads = 8;              // >= 1
    long d_ff = 1024;            // >= 1
    long encoder_layers = 3;     // >= 1
    long decoder_layers = 3;     // >= 1
    double dropout = 0.1;        // [0, 1)
    double attention_dropout = 0.1;  // [0, 1)
    std::string norm = "post";   // post | pre
    std::string share_embeddings = "all";  // none | decoder | all
    bool scale_embeddings = true;
    std::vector<PositionSpec> position = default_position();  // [] = no position information
};

// The parameters of the model `m` describes with a vocabulary of `vocab` (embeddings and output projection, then
// per layer attention's 4 d_model^2 and the feed-forward's 2 d_model d_ff; a decoder layer of an encoder-decoder
// has a second, cross attention); biases, norms and position encodings' own parameters left out.
double model_parameters(const ModelConfig& m, double vocab);
// "N decoder layers", "N encoder layers" or "N encoder and M decoder layers", as m.family builds them.
std::string describe_layers(const ModelConfig& m);
// Bytes to train them: weights, gradients and Adam's two moments, 4 floats a parameter.
inline double training_bytes(double parameters) { return parameters * sizeof(float) * 4; }

struct TrainConfig {
    long epochs = 10;               // >= 0 (0 = no training)
    long max_steps = 0;             // >= 0; 0 = no limit
    long batch_tokens = 4096;       // >= 1
    double lr = 1.0;                // > 0; scale of the inverse-sqrt schedule
    long warmup = 4000;             // >= 1
    double label_smoothing = 0.1;   // [0, 1)
    double clip_norm = 0.0;         // >= 0; 0 = off
    double adam_beta1 = 0.9;        // [0, 1)
    double adam_beta2 = 0.98;       // [0, 1)
    double adam_eps = 1e-9;         // > 0
    long eval_every = 0;            // >= 0 steps; 0 = once per epoch
    long checkpoint_every = 0;      // >= 0 steps; 0 = each epoch
    std::string on_nonfinite = "stop";  // stop | skip
    double time_limit_minutes = 0;  // >= 0; 0 = none (else stop training after this and evaluate)
    // Plateau stopping on validation loss: stop after `patience` validations in a row without an
    // improvement of more than `min_delta` (nats per token). 0 = off; epochs and max_steps stay the caps.
    // What an improvement is measured against (`stop.rule`):
    //   improvement   the loss of the last validation that counted as an improvement: the reference moves
    //                 only on an improvement larger than min_delta (Keras' and Lightning's EarlyStopping).
    //                 The default.
    //   running_best  the lowest loss so far, which every improvement moves, however small: a loss falling
    //                 by less than min_delta per validation stops the run. The rule of the converged tables
    //                 and the LM study (their configs say so).
    long patience = 0;              // >= 0
    double min_delta = 0.0;         // >= 0
    std::string stop_rule = "improvement";  // improvement | running_best
    // Competence target (`stop.target_metric`, `stop.target`): stop as soon as a validation reaches
    // valid_<metric> >= target (a metric the task computes at each validation, e.g. accuracy); the best
    // checkpoint then follows that metric (ties: the lower loss). "" = no target.
    std::string target_metric;
    double target = 0.0;
    bool valid_bleu = false;        // also greedy-decode the validation split at each validation and log its BLEU
};

struct EvalConfig {
    long beam = 4;              // >= 1
    double alpha = 0.6;         // >= 0; length penalty
    double max_len_a = 1.2;     // >= 0; max output length = a * source length + b
    long max_len_b = 10;        // >= 0
    long batch_tokens = 8000;   // >= 1
    std::vector<std::string> splits{"val", "test2016"};  // each: data.valid_split, a data.test_splits entry, or "train"
    std::vector<std::string> metrics{"bleu_tok", "bleu"};  // from bleu, bleu_tok, loss, ppl, accuracy
    // eval.split_metrics: per split (an entry of `splits`), the metrics it computes instead of `metrics`, e.g.
    // the validation split at the training length only while the test split pays for sliding windows.
    std::map<std::string, std::vector<std::string>> split_metrics;
    const std::vector<std::string>& metrics_for(const std::string& split) const {
        const auto it = split_metrics.find(split);
        return it == split_metrics.end() ? metrics : it->second;
    }
};

// One sweep.grid entry: a dotted config key and the values it takes.
struct SweepAxis {
    std::string key;                          // as written: "model.position.k", "model.position[1].keys"
    std::vector<YAML::Node> values;           // in file order, each validated like the key itself
    std::vector<std::string> value_locations; // where each value was written, for messages
};

struct SweepConfig {
    std::vector<SweepAxis> grid;  // in file order
    // sweep.cells: explicit points, each a map of dotted keys (as in the grid) to one value, every cell with
    // the same keys. Kept as one axis per key whose i-th value is cell i's (zipped, not crossed); the cells
    // are crossed with the grid and the seeds. For tables whose rows sit at different values of another key
    // (each encoding at its own chosen learning rate).
    std::vector<SweepAxis> cells;
    std::size_t cell_count() const { return cells.empty() ? 0 : cells.front().values.size(); }
    std::vector<long> seeds;      // [] = just the top-level seed
    // sweep.only: the points that make up the study, as patterns of run ids (fnmatch, as `relpos run --only`
    // takes); [] = every point. A study that stopped at its budget lists the points it ran, so that `relpos
    // run` of its committed config trains nothing more; the others stay in the grid (and in the run names).
    std::vector<std::string> only;
};

struct ReferenceColumn {  // report.reference: the paper's published numbers
    std::string title = "paper";
    std::map<std::string, double> values;  // row label (a swept value as text, e.g. "16") -> number
};

struct ReportConfig {
    std::string title;
    std::string rows;     // a sweep.grid key, or "" for one row
    std::string columns;  // a sweep.grid key, or ""
    std::vector<std::string> metrics;  // "<split>.<metric>", e.g. "test2016.bleu_tok"; [] = every eval split x metric
    std::optional<ReferenceColumn> reference;
    std::vector<std::string> plots;    // from learning_curves, metric_vs_row, attention
    std::string baseline;  // a row label (a value of the rows axis); adds differences paired by seed
    // Pairs of rows (a, b) to compare as a - b beside the baseline comparisons, with the same tests.
    std::vector<std::pair<std::string, std::string>> contrasts;
    long bootstrap = 1000;  // >= 0; paired bootstrap resamples over test sentences for BLEU differences (0 = off)
    // Upper edges of source-length buckets (whitespace tokens of the source): [10, 20] gives BLEU for
    // 1-10, 11-20 and 21+ tokens on every test split the metrics name. [] = no bucket table.
    std::vector<long> length_buckets;
    // Another experiment's results beside these (e.g. the same table at a shorter training budget): its
    // mean ± sd per row and its paired differences in extra columns, and its series in the metric plot.
    std::string compare_dir;    // its results directory ("" = none); rows are matched by label
    std::string compare_title;  // how the tables name it, e.g. "1,000 updates"
};

struct ExperimentConfig {
    std::string name;                // required; [A-Za-z0-9_.-]+; results go to <results_dir>/<name>/
    std::string description;
    std::string results_dir = "results";
    // Where run directories live when several experiments share runs ("" = <results_dir>/<name>/runs).
    // A run is then named by its config hash (its resolved data, model, train, eval and seed) and the
    // experiment's runs/<id> is a symbolic link to it, so a point that several tables ask for is
    // trained once.
    std::string run_store;
    long seed = 1;                   // >= 0
    long threads = 2;                // >= 1; total threads for BLAS (and OpenMP if any)
    DataConfig data;
    ModelConfig model;
    TrainConfig train;
    EvalConfig eval;
    SweepConfig sweep;
    ReportConfig report;

    std::string source;  // the file it was loaded from ("" when built in code); not written by to_yaml
};

struct LoadFlags {
    bool check_paths = true;       // data.dir must exist for a task that reads files (off to re-read a finished run's config elsewhere)
    bool cross_checks = true;      // rules across keys (heads | d_model, eval splits, report rows, data.dir)
    bool check_grid_values = true; // validate each sweep.grid value on its own (expand_sweep checks whole points)
};

// A value written into the parsed file before validation: a command-line override, a sweep grid value.
struct Assignment {
    std::string key;           // dotted key: "model.dropout", "model.position[1].k", "sweep.grid.model.position.k"
    YAML::Node value;
    std::string location;      // where messages say it came from
    std::string shown_prefix;  // put before the key in messages ("sweep.grid." for grid values)
};

// Parses "dotted.key=value", the value as YAML ("[val, test2016]" is a list; an empty value is "").
// Throws ConfigError for a missing '=', a malformed key or unparsable YAML. The key is checked against
// the schema when the assignment is applied.
Assignment parse_override(const std::string& text);

// Loads, applies the overrides in order, fills defaults and validates. Throws ConfigError.
ExperimentConfig load_config(const std::string& path, const std::vector<std::string>& overrides = {},
                             const LoadFlags& flags = {});
// The same with already-parsed assignments (expand_sweep uses it).
ExperimentConfig resolve_config(const std::string& path, const std::vector<Assignment>& assignments,
                                const LoadFlags& flags = {});

// The fully resolved config as YAML (every default filled in), loadable by load_config to an equal config.
std::string to_yaml(const ExperimentConfig& cfg);
// The data section as to_yaml writes it, data.lm included whatever the task (the refusal of keys a task does
// not read compares a config's values with the defaults through it).
YAML::Node data_yaml(const DataConfig& d);

// Every key the config layer reads, with its type, default and allowed values, as the read_* functions
// declare them (recorded while reading a config of defaults: `name` only). Keys read only in some
// configurations are listed too where their defaults are read unconditionally (data.synthetic, data.lm);
// the inside of model.position (each encoding's options: `relpos list`), sweep.grid and
// report.reference.values are maps of the user's own keys.
std::vector<KeyRecord> describe_config_keys();
// FNV-1a 64 (16 hex digits) of the resolved YAML of what decides a run's results: seed, data, model,
// train, eval. name, description, results_dir, threads, sweep and report are left out, so renaming,
// re-titling a report, growing a sweep or changing the thread count does not invalidate finished runs.
std::string config_hash(const ExperimentConfig& cfg);
// One section of the text config_hash reads ("data", "model", "train", "eval"), as one line of flow YAML:
// what names a run's data, for example (the runner loads the data of equal sections once).
std::string section_yaml(const ExperimentConfig& cfg, const std::string& section);


// A value as a message or report label shows it: the scalar text ("16", "false"), else one line of flow
// YAML ("[val, test2016]", "{type: shaw, k: 16}").
std::string value_text(const YAML::Node& value);

// report.rows / report.columns may join several sweep.grid keys with '+' ("data.task+model.position"): the
// table then has a row per combination, labelled by the parts' values joined with " · ".
std::vector<std::string> report_axis_parts(const std::string& key);  // "a+b" -> {"a", "b"}; "" -> {}
constexpr const char* kAxisLabelJoin = " · ";
// The labels of a report axis in the sweep's order (combinations: the first part slowest).
std::vector<std::string> report_axis_labels(const ExperimentConfig& cfg, const std::string& key);
// A value as an override's right-hand side: like value_text, but quoted where YAML needs it.
std::string value_yaml(const YAML::Node& value);
std::string fnv1a64_hex(const std::string& text);

}  // namespace relpos
