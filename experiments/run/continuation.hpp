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
// before 2026-11-26, 04a7fa3, dropped it).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
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

// The other half: a finished run of the same config under another cap that stopped before reaching either cap,
// by a rule that does not read the cap (its competence target or its plateau, at one of its periodic
// validations), *is* the run this config would train, update for update. So a study that raises its cap finds
// such runs finished: they are linked, listed as finished and not trained again (only in a run store, where
// runs of several experiments and caps meet). Its directory, or none. Older runs qualify too: the other cap
// is read from the run's config.yaml and the match is on its recorded config hash.
std::optional<std::filesystem::path> find_equivalent(const ExperimentConfig& cfg, const std::filesystem::path& run_dir);
// The same search for many points: the store's runs that stopped by target or plateau, read once (results.json
// and config.yaml of each), then looked up by the config hash each point would have under each recorded cap, so a
// point costs one hash per distinct cap, not a read of every run (a 150-point --list on a 168-run store: 4.3 s
// before). find(cfg, own) gives what find_equivalent(cfg, own) gives.
class EquivalentIndex {
public:
    explicit EquivalentIndex(const std::filesystem::path& store);
    std::optional<std::filesystem::path> find(const ExperimentConfig& cfg, const std::filesystem::path& own) const;

private:
    struct Entry {
        std::filesystem::path dir;
        std::int64_t steps;
        long cap;  // the run's train.max_steps
    };
    std::map<std::string, std::vector<Entry>> by_hash_;  // recorded config hash -> runs
    std::set<long> caps_;
};
// Whether the finished run in `dir` is that run for `cfg` (its results.json and config.yaml read).
bool is_equivalent(const std::filesystem::path& dir, const ExperimentConfig& cfg);

// Fills the fresh run_dir from c.from: its metrics.jsonl and log, and its last and best checkpoints (made this
// config's, config_hash), so that training resumes at c.step. A crash part-way leaves no checkpoint: the next
// start begins again.
void start_from(const Continuation& c, const std::filesystem::path& run_dir, const std::string& config_hash);

}  // namespace relpos
