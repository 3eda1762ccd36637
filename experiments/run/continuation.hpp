// Continuing a capped run. A run that stopped at train.max_steps (the cap, before its competence target or
// its plateau) keeps its optimiser state, and a later run whose config differs from it only by a larger
// max_steps starts from that run's last checkpoint instead of from step 0: the same numbers, update for
// update, as one run trained to the larger cap (a resume is exact, and nothing in training reads max_steps
// but the stop). So raising a study's cap costs only the new updates.
//
// Only where the longer run would have done exactly what the capped one did: the capped run's last step was
// one of the longer run's periodic validations (its max_steps a multiple of train.eval_every > 0; otherwise
// its closing validation is one the longer run never makes, and the best checkpoint and plateau count could
// differ), on the same number of threads and MPI ranks, and with its optimiser state kept (runs finished
// before 2026-11-26, session 17, dropped it).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "experiments/config/config.hpp"

namespace relpos {

// What a capped run and its continuations share: run_identity with train.max_steps cleared.
std::string continuation_key(const ExperimentConfig& cfg);

struct Continuation {
    std::filesystem::path from;  // the capped run's directory
    std::uint64_t step = 0;      // its last update
};

// The finished capped run among run_dir's siblings (the same run store) this config continues, the one with
// the most updates; none when no run qualifies. `refused`, when given, receives one line per capped run of
// the same config that could not be continued, with the reason ("<dir> (capped at step 10000): it kept no
// optimiser state ..."), so that a run that starts from step 0 says why.
std::optional<Continuation> find_continuation(const ExperimentConfig& cfg, const std::filesystem::path& run_dir,
                                              int threads, int ranks, std::vector<std::string>* refused = nullptr);

// Fills the fresh run_dir from c.from: its metrics.jsonl and log, and its last and best checkpoints (made this
// config's, config_hash), so that training resumes at c.step. A crash part-way leaves no checkpoint: the next
// start begins again.
void start_from(const Continuation& c, const std::filesystem::path& run_dir, const std::string& config_hash);

}  // namespace relpos
