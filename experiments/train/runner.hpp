// The experiment runner: data preparation, model construction from a config, training, evaluation
// (decoding + BLEU), and the run directory of each sweep point.
//
// results/<name>/experiment.yaml          the resolved top-level config (for `relpos report`)
// results/<name>/subword/                  cached SentencePiece models (shared by the sweep points)
// results/<name>/runs/<id>/config.yaml     the point's resolved config
//                         /metrics.jsonl   one JSON object per training step / validation
//                         /checkpoints/{last,best}/  .npy parameters + manifest + state
//                         /hyp.<split>.txt detokenized hypotheses, one per source line
//                         /results.json    final metrics (its presence marks the run finished)
//                         /log.txt         what the run printed
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "experiments/config/config.hpp"
#include "experiments/eval/decode.hpp"
#include "experiments/data/example.hpp"
#include "experiments/data/subword.hpp"
#include "experiments/config/sweep.hpp"
#include "experiments/tasks/task.hpp"
#include "nn/transformer.hpp"

namespace relpos {

// Loads and encodes the data of a config through its task (experiments/tasks), SentencePiece models cached
// under cache_dir, then checks what every task's data must satisfy.
Dataset load_dataset(const ExperimentConfig& cfg, const std::string& cache_dir,
                     const std::function<void(const std::string&)>& log = {});

// Builds the model; the position encodings read and validate their options from the config (errors
// name the file, line and key). Throws ConfigError when a learned position table is shorter than
// the longest sequence of the data.
std::unique_ptr<nn::Transformer<float>> build_model(const ExperimentConfig& cfg, std::size_t vocab,
                                                    std::size_t longest_source = 0, std::size_t longest_target = 0);

DecodeOptions decode_options(const EvalConfig& e, std::size_t beam_override = 0);

// Decodes every example of a split in corpus order.
std::vector<std::string> translate_split(const nn::Transformer<float>& model, const Dataset& data,
                                         const std::vector<Example>& examples, const DecodeOptions& opt,
                                         std::size_t batch_tokens);

// Metrics of one split: the names in eval.metrics -> value.
std::map<std::string, double> score_split(const nn::Transformer<float>& model, const Dataset& data,
                                          const EvalSplit& split, const std::vector<std::string>& hyps,
                                          const ExperimentConfig& cfg, std::map<std::string, std::string>* signatures);

struct RunOptions {
    std::size_t jobs = 0;  // 0 = auto: min(points, threads), each run on threads / jobs threads
    std::optional<Shard> shard;
    bool quiet = false;
    bool list_only = false;  // print the sweep points (ids and overrides) and stop
    // Unix time after which no new run starts (--start-before); the running ones finish.
    std::optional<std::int64_t> start_before;
    // Unix time by which every run this command starts should have finished (--finish-before): a new run
    // starts only while there is time for the most updates a finished run of the sweep took, at the pace
    // of the latest finished run (+10% and 5 minutes); with no finished run yet it acts as --start-before.
    std::optional<std::int64_t> finish_before;
};

// `relpos run`: every (selected) sweep point; finished runs are skipped, interrupted ones resumed.
// Returns the process exit code (0 ok, 3 non-finite stop, 130 interrupted). Under MPI (world() has several
// ranks; docs/distributed.md) rank 0 does all of that and the other ranks train each run with it.
int run_experiment(const std::string& config_path, const std::vector<std::string>& overrides, const RunOptions& opt);

// Per-position accuracy in %: reference tokens (whitespace-separated) matched by the hypothesis token
// at the same position, over all reference tokens; a short hypothesis misses its missing positions and
// extra hypothesis tokens count as errors in the denominator (max of the two lengths per sentence).
// run_experiment for one process, or for rank 0 of an MPI job.
int lead_experiment(const std::string& config_path, const std::vector<std::string>& overrides, const RunOptions& opt);

double token_accuracy(const std::vector<std::string>& hyps, const std::vector<std::string>& refs);

// Undoes Moses' XML escapes and English apostrophe splits ("it 's" -> "it's") for 13a scoring.
std::string moses_untokenize(const std::string& tokenized);

// Which code made the results (git commit, or "unknown" outside a checkout).
std::string source_commit();
// The name of a run in a run_store: config_hash with every position option resolved to its value
// (defaults written out), so two experiments that write the same model differently share the run.
std::string run_identity(const ExperimentConfig& cfg);
std::string machine_description();

}  // namespace relpos
