// Limits a run's sequences must keep, checked against its data before anything is written: the range an
// encoding with randomized positions draws from must hold every sequence it draws positions for.
#pragma once

#include "experiments/config/config.hpp"
#include "experiments/tasks/task.hpp"

namespace relpos {

// Throws ConfigError (one sentence naming the file, line and model.position key) when an encoding's
// `randomized: N` is shorter than the longest sequence it draws positions for: the training sequences
// always, and the validation and test splits too when it draws at evaluation (randomized_eval: sample or
// sample_by_length; with identity, evaluation reads positions 0, 1, 2, ... and any length is fine).
void check_randomized_ranges(const ExperimentConfig& cfg, const Dataset& data);

// Throws ConfigError, before any data is generated or any file written, when a lower bound of the memory
// that generating a task's examples (data.synthetic: sizes x lengths) or evaluating its longest sequence (one
// attention matrix per head: heads x L x max(L, eval.batch_tokens) floats, scores and weights) or training one
// batch (the activations the backward keeps for train.batch_tokens tokens, at most a synthetic task's training
// set) needs is more than this machine has (its physical memory, or the memory limit of its control group when lower). The
// sentence names the setting to change. `overrides` ("key=value", as given on the command line) name where a
// blamed value came from when it came from one.
void check_memory_up_front(const ExperimentConfig& cfg, const std::vector<std::string>& overrides = {});

}  // namespace relpos
