// `relpos run`: a config's sweep points, scheduled over jobs (and MPI ranks), each trained in its run
// directory unless finished; --list, --only, --shard, --start-before and --finish-before. The only room that
// knows about many runs.
//
// results/<name>/experiment.yaml          the resolved top-level config (for `relpos report`)
// results/<name>/subword/                  cached SentencePiece models (shared by the sweep points)
// results/<name>/runs/<id>/                one run (run_one.hpp)
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "experiments/run/sweep.hpp"

namespace relpos {

struct RunOptions {
    std::size_t jobs = 0;  // 0 = auto: min(points, threads), each run on threads / jobs threads
    std::optional<Shard> shard;
    std::string only;  // --only GLOB: only the points whose id matches (select_matching), before --shard splits them
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

// run_experiment for one process, or for rank 0 of an MPI job.
int lead_experiment(const std::string& config_path, const std::vector<std::string>& overrides, const RunOptions& opt);

}  // namespace relpos
