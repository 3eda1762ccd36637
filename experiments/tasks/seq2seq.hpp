// What the encoder-decoder tasks share (the base class of their Task: decoding every split with beam
// search and scoring it) and share with the commands that decode outside a run (relpos eval, translate):
// decoding a split, and scoring it with the metrics of eval.metrics.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "experiments/eval/decode.hpp"
#include "experiments/tasks/task.hpp"

namespace relpos {

// The metrics an encoder-decoder task computes.
extern const std::vector<std::string> kSeq2SeqMetrics;

// An encoder-decoder task: evaluate() decodes a split with the configured beam, writes hyp.<split>.txt and
// scores it (score_split); with train.valid_bleu, each validation also logs the greedy BLEU of the
// validation split. A subclass loads its data.
class Seq2SeqTask : public Task {
public:
    std::map<std::string, double> evaluate(const EvalRequest& r) const override;
    std::vector<std::pair<std::string, double>> validation_metrics(const nn::Transformer<float>& model,
                                                                   const Dataset& data,
                                                                   const ExperimentConfig& cfg) const override;
};

// The splits a config's run loads: eval.splits and data.valid_split.
std::set<std::string> wanted_splits(const ExperimentConfig& cfg);

// Decodes every example of a split in corpus order.
std::vector<std::string> translate_split(const nn::Transformer<float>& model, const Dataset& data,
                                         const std::vector<Example>& examples, const DecodeOptions& opt,
                                         std::size_t batch_tokens);

// Metrics of one split: the names in eval.metrics -> value (BLEU by the policy of eval/scoring.hpp).
std::map<std::string, double> score_split(const nn::Transformer<float>& model, const Dataset& data,
                                          const EvalSplit& split, const std::vector<std::string>& hyps,
                                          const ExperimentConfig& cfg, std::map<std::string, std::string>* signatures);

}  // namespace relpos
