// Compatibility header: the runner that lived here is now split by job. Include the room you need instead:
//   experiments/run/experiment.hpp   relpos run: sweeps, scheduling (run_experiment, RunOptions)
//   experiments/run/identity.hpp     run names (run_identity)
//   experiments/run/provenance.hpp   source_commit, machine_description
//   experiments/train/model.hpp      build_model
//   experiments/tasks/task.hpp       load_dataset, Dataset
//   experiments/tasks/seq2seq.hpp    translate_split, score_split
//   experiments/eval/decode.hpp      decode_options
//   experiments/eval/scoring.hpp     the BLEU policy, token_accuracy, moses_untokenize
// Kept only for tests/test_position_plugins.cpp (another engineer's file); remove it once that includes
// the headers above.
#pragma once

#include "experiments/eval/decode.hpp"
#include "experiments/eval/scoring.hpp"
#include "experiments/run/experiment.hpp"
#include "experiments/run/identity.hpp"
#include "experiments/run/provenance.hpp"
#include "experiments/run/sweep.hpp"
#include "experiments/tasks/seq2seq.hpp"
#include "experiments/tasks/task.hpp"
#include "experiments/train/model.hpp"
