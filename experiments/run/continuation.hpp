// Continuing a run. A run whose config differs from a run of the store only in where it stops, train.max_steps
// (the cap) and the plateau rule (train.stop.patience; with patience 0 its other keys are read by nothing), starts from that run's last checkpoint instead of from
// step 0, where the other run is one it would have trained itself: the same numbers, update for update (a
// resume is exact, and nothing in training reads the cap or the patience but the stop). So raising a study's
// cap, or letting its runs go on past a plateau, costs only the new updates. The other run may be
//  - finished at its cap (stop_reason max_steps) below this run's;
//  - finished on its plateau (stop_reason plateau), when this run's rule would not have stopped there
//    (patience 0, off, or larger);
//  - unfinished (interrupted, or parked: no results.json, a last checkpoint), its checkpoint below this run's cap.
// Only where this run would have done exactly what the other did: its patience 0, or at least the other's (a
// smaller one could have stopped earlier; a run trained without the rule is continued only without it); a
// finished run's last step one of this run's periodic validations (a multiple of train.eval_every > 0; a
// closing validation elsewhere is one this run never makes, and the best checkpoint and plateau count could
// differ), on the same number of threads and MPI ranks; and its optimiser state kept (runs finished before
// 2026-11-26, 04a7fa3, dropped it, as did runs stopped on a plateau until 2026-12-06; a committed run has no
// checkpoints). An unfinished run is continued as a resume is: its checkpoint's config hash checked, its thread
// count not (none is recorded before the run finishes).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "experiments/config/config.hpp"

namespace relpos {

struct Continuation {
    std::filesystem::path from;  // the other run's directory
    std::uint64_t step = 0;      // its last checkpoint's update
    std::string how;             // how it stopped: "max_steps", "plateau" or "interrupted"
    // "capped at step 10000", "stopped on its plateau at step 28250", "interrupted at step 29819"
    std::string said() const;
};

// The run among run_dir's siblings (the same run store) this config continues, the one with the most updates;
// none when no run qualifies. `refused`, when given, receives one line per run of the same config but its
// stop that could not be continued, with the reason ("<dir> (capped at step 10000): it kept no optimiser
// state ..."), so that a run that starts from step 0 says why. Reads only (takes no lock).
std::optional<Continuation> find_continuation(const ExperimentConfig& cfg, const std::filesystem::path& run_dir,
                                              int threads, int ranks, std::vector<std::string>* refused = nullptr);

// The other half: a finished run of the same config under another stop (cap or plateau rule) that stopped by a
// rule this config's run would have stopped by at the same update, at one of its periodic validations, before
// this config's cap (its competence target, under patience 0 or a patience no smaller; or its plateau, under
// the same plateau rule), *is* the run this config would train, update for update. So a study that raises its
// cap or drops its plateau rule finds such runs finished: they are linked, listed as finished and not trained
// again (only in a run store, where runs of several experiments and stops meet). Its directory, or none. Older
// runs qualify too: the other stop is read from the run's config.yaml and the match is on its recorded config
// hash.
std::optional<std::filesystem::path> find_equivalent(const ExperimentConfig& cfg, const std::filesystem::path& run_dir);
// The same search for many points: the store's runs that stopped by target or plateau, read once (results.json
// and config.yaml of each), then looked up by the config hash each point would have under each recorded stop, so
// a point costs one hash per distinct stop, not a read of every run (a 150-point --list on a 168-run store: 4.3 s
// before). find(cfg, own) gives what find_equivalent(cfg, own) gives.
class EquivalentIndex {
public:
    explicit EquivalentIndex(const std::filesystem::path& store);
    ~EquivalentIndex();
    std::optional<std::filesystem::path> find(const ExperimentConfig& cfg, const std::filesystem::path& own) const;

private:
    struct Entry;  // a run and how it stopped
    std::map<std::string, std::vector<Entry>> by_hash_;  // recorded config hash -> runs
};
// Whether the finished run in `dir` is cfg's run under its own stop (cap and plateau rule, from its config.yaml):
// the same config but where it stops, whether or not it is cfg's run, equivalent or continuable.
bool same_run_but_stop(const std::filesystem::path& dir, const ExperimentConfig& cfg);
// Whether the finished run in `dir` is that run for `cfg` (its results.json and config.yaml read).
bool is_equivalent(const std::filesystem::path& dir, const ExperimentConfig& cfg);

// Fills the fresh run_dir from c.from: its metrics.jsonl and log, and its last and best checkpoints (made this
// config's, config_hash), so that training resumes at c.step. A crash part-way leaves no checkpoint: the next
// start begins again. The caller holds c.from's lock when it is unfinished (nobody trains it meanwhile).
void start_from(const Continuation& c, const std::filesystem::path& run_dir, const std::string& config_hash);

}  // namespace relpos
