// Tasks as plug-ins. A task owns its data (loading or generating the training set and the evaluation
// splits), the model family it trains (encoder-decoder or decoder-only), and the metrics it computes on a
// split; the runner, sweeps, checkpoints, progress, reports and plots work for any task unchanged.
//
// Adding a task = one file that defines a Task subclass and a register_<name>(TaskRegistry&) function,
// plus one registration line in experiments/tasks/registry.cpp (docs/adding-a-task.md walks through
// an example). A test can register a task of its own with task_registry().add(...).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "experiments/config/config.hpp"
#include "experiments/data/corpus.hpp"
#include "experiments/data/example.hpp"
#include "experiments/data/subword.hpp"
#include "experiments/train/model.hpp"  // model_family
#include "nn/registry.hpp"
#include "nn/transformer.hpp"

namespace relpos {

using Log = std::function<void(const std::string&)>;

// One evaluation split: encoded examples plus what its metrics compare against.
struct EvalSplit {
    std::vector<Example> examples;
    std::vector<std::string> sources;  // source text, one per example (seq2seq tasks)
    std::vector<std::string> refs;     // reference text as the run's tokenization sees it (tokenized text
                                       // for data.tokenized, raw otherwise; id strings for synthetic tasks)
    std::vector<std::string> refs_raw; // untokenized references (tokenized text), for sacreBLEU's 13a BLEU
    std::vector<std::int32_t> stream;  // language-model tasks: the split as one token stream
    std::vector<std::size_t> lengths;  // length-generalization tasks: each example's input length
};

struct Dataset {
    std::vector<Example> train;
    std::map<std::string, EvalSplit> splits;  // by name: the validation split, test splits (and "train" when asked)
    std::string valid_split;
    std::shared_ptr<Subword> subword;         // null for id-level tasks
    std::size_t vocab = 0;
    bool synthetic = false;                   // targets are id strings (no detokenizer, no 13a case rules)
    nn::Family family = nn::Family::EncoderDecoder;
    // Longest sequences the model must take (for learned position tables): source, and target + 1 (BOS)
    // for the encoder-decoder; for a decoder-only task longest_target + 1 is its longest input. A task may
    // set them itself (a language model evaluated beyond its training context sets its training length);
    // left at 0, load_dataset computes them over every split.
    std::size_t longest_source = 0, longest_target = 0;

    std::string detokenize(const std::vector<std::int32_t>& ids) const;  // model output -> text
};

// What a task's evaluation of one split gets. The model is in eval mode with its best weights loaded.
struct EvalRequest {
    const nn::Transformer<float>& model;
    const Dataset& data;
    const std::string& split;
    const ExperimentConfig& cfg;
    std::string run_dir;                             // where it may write files (hyp.<split>.txt)
    std::map<std::string, std::string>* signatures;  // metric -> signature (sacreBLEU-style), if any
    Log log;
};

class Task {
public:
    virtual ~Task() = default;
    // Loads or generates the training set and every split the config evaluates (data.valid_split and
    // eval.splits). Errors are ConfigError / DataError sentences naming the config file and key.
    virtual Dataset load(const ExperimentConfig& cfg, const std::string& cache_dir, const Log& log) const = 0;
    // The metrics of one split: "<metric>" or "<metric>@<length>" -> value; each name in eval.metrics
    // produces at least one entry.
    virtual std::map<std::string, double> evaluate(const EvalRequest& r) const = 0;
    // Extra metrics logged at every validation during training (train.valid_bleu: valid_bleu_tok; with
    // train.stop.target_metric: <valid_split>.<metric> for each of the entry's target_metrics); none by default.
    virtual std::vector<std::pair<std::string, double>> validation_metrics(const nn::Transformer<float>& model,
                                                                           const Dataset& data,
                                                                           const ExperimentConfig& cfg) const {
        return {};
    }
};

// Raw text -> the normalized form a task trains on (TaskEntry::tokenized_text).
struct TextNormalizer {
    std::vector<std::string> languages;  // the languages it knows (data.src, data.tgt, relpos normalize --lang)
    // One line of raw text in language `lang` (one of `languages`) in the training text's form.
    std::function<std::string(const std::string& line, const std::string& lang)> normalize;
    // Whether a line looks normalized already (the commands warn before normalizing text twice).
    std::function<bool(const std::string& line)> looks_normalized;
    explicit operator bool() const { return static_cast<bool>(normalize); }
};

struct TaskEntry {
    std::string name;
    std::string summary;                    // one line for `relpos list`
    std::vector<nn::Family> families;       // the model.family values it trains, the first being its usual one
    std::map<nn::Family, std::vector<std::string>> metrics;  // the eval.metrics names it computes, by family
    std::vector<TaskOption> options;        // the data.* keys it reads, for `relpos list`
    // The metrics train.stop.target_metric may name: validation_metrics() computes <valid_split>.<name> for
    // them when the config sets a target.
    std::map<nn::Family, std::vector<std::string>> target_metrics;
    std::function<std::unique_ptr<Task>(nn::Family)> make;

    // What the config layer reads of it (data.dir, default test splits and metrics, the sections its runs
    // are named by): experiments/config/task_schema.hpp.
    TaskDataSchema data;
    // For the commands that score or translate text outside a run (relpos eval, translate, normalize,
    // report): a task whose text comes lowercased and Moses-tokenized (under data.tokenized) says how raw
    // input is brought into that form. Empty: the task reads text as given.
    TextNormalizer tokenized_text;
    // A task whose splits are text files: the file of `split` in language `lang` (tokenized or raw), for
    // the report's per-sentence statistics (bootstrap, length buckets). Null: the report has none.
    std::function<std::string(const ExperimentConfig&, const std::string& split, const std::string& lang, bool tokenized)>
        split_file;
    // A task whose sequences are symbol ids (no subword model): its vocabulary size under a config. Null:
    // the run's subword.model gives the vocabulary.
    std::function<std::size_t(const ExperimentConfig&)> id_vocab;
};

using TaskRegistry = nn::Registry<TaskEntry>;  // nn/registry.hpp: refuses a second entry of a name

// The process-wide registry, with the built-in tasks registered on first use.
TaskRegistry& task_registry();

// The registry entry of a config's task, or nullptr when data.task names none (make_task reports that).
const TaskEntry* task_entry(const ExperimentConfig& cfg);
// Whether the run reads lowercased Moses-tokenized text (TaskEntry::tokenized_text and data.tokenized).
bool reads_tokenized_text(const ExperimentConfig& cfg);
// The task that normalizes raw text for `relpos normalize --task NAME`: NAME's entry, or with NAME empty
// the first registered task that has a normalizer. Throws ConfigError naming --task and the tasks that do.
const TaskEntry& text_normalizing_task(const std::string& name);

// Helpers the task files share.
// f(), with a DataError from a generator re-thrown as one naming the config file and the section that set
// the offending value ("<file>: data.synthetic: ...").
template <class F>
auto located(const ExperimentConfig& cfg, const char* section, F&& f) -> decltype(f()) {
    try {
        return f();
    } catch (const DataError& e) {
        throw DataError(std::string(cfg.source) + ": " + section + ": " + e.what());
    }
}
// The SentencePiece model of data.vocab_size / data.subword_model trained on `sentences` (or reused from
// cache_dir); a training failure names data.vocab_size.
std::shared_ptr<Subword> train_subword(const ExperimentConfig& cfg, const std::vector<std::string>& sentences,
                                       const std::string& cache_dir);

// Loads and encodes the data of a config through its task, SentencePiece models cached under cache_dir,
// then checks what every task's data must satisfy (training examples left, no empty reference, sources
// within the decoding bound). Errors are ConfigError / DataError sentences naming the config file.
Dataset load_dataset(const ExperimentConfig& cfg, const std::string& cache_dir, const Log& log = {});

// The task of a config, checked against it: a registered name, a family it trains, metrics it computes.
// Throws ConfigError ("<file>: data.task: ...", "<file>: model.family: ...", "<file>: eval.metrics: ...").
std::unique_ptr<Task> make_task(const ExperimentConfig& cfg);

}  // namespace relpos
