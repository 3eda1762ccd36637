// What the encoder-decoder tasks share with the commands that decode outside a run (relpos eval,
// translate): decoding a split, and scoring it with the metrics of eval.metrics.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "experiments/eval/decode.hpp"
#include "experiments/tasks/task.hpp"

namespace relpos {

// Decodes every example of a split in corpus order.
std::vector<std::string> translate_split(const nn::Transformer<float>& model, const Dataset& data,
                                         const std::vector<Example>& examples, const DecodeOptions& opt,
                                         std::size_t batch_tokens);

// Metrics of one split: the names in eval.metrics -> value (BLEU by the policy of eval/scoring.hpp).
std::map<std::string, double> score_split(const nn::Transformer<float>& model, const Dataset& data,
                                          const EvalSplit& split, const std::vector<std::string>& hyps,
                                          const ExperimentConfig& cfg, std::map<std::string, std::string>* signatures);

}  // namespace relpos
