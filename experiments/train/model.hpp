// The model of a config: the Transformer its model section describes, with the position encodings it names
// (each reads and validates its own options; errors name the file, line and key).
#pragma once

#include <cstddef>
#include <memory>

#include "experiments/config/config.hpp"
#include "nn/transformer.hpp"

namespace relpos {

// model.family as the nn layer names it.
nn::Family model_family(const ModelConfig& m);

// Builds the model; the position encodings read and validate their options from the config (errors
// name the file, line and key). Throws ConfigError when a learned position table is shorter than
// the longest sequence of the data, or when the model cannot fit in this machine's memory.
std::unique_ptr<nn::Transformer<float>> build_model(const ExperimentConfig& cfg, std::size_t vocab,
                                                    std::size_t longest_source = 0, std::size_t longest_target = 0);

}  // namespace relpos
