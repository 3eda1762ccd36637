// Sweeps: a config's sweep.grid (dotted key -> values, in file order) times its sweep.cells (explicit
// points whose keys are set together) times sweep.seeds expands into one run per point, each with a
// readable, unique directory name; sharding splits the points between the jobs of a Slurm array, and a
// pattern of ids (--only) picks some of them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "experiments/config/config.hpp"

namespace relpos {

struct SweepPoint {
    std::size_t index = 0;  // position in the full expansion (grid keys in file order, first slowest; then the
                            // cells in file order; seeds innermost)
    // Directory name: "<last key component>=<value>" per grid key, then per cell key, then "seed=<seed>", joined by '_',
    // e.g. "k=16_seed=1"; only [A-Za-z0-9=._-]; unique within the sweep. No grid: "seed=<seed>".
    std::string id;
    // Applied after the command-line overrides they give `config`, e.g. {"model.position.k=16", "seed=1"}.
    std::vector<std::string> overrides;
    // Grid and cell key -> value as text ("model.position.k" -> "16"), plus "seed" -> "1", for report rows/columns.
    std::map<std::string, std::string> labels;
    // The resolved, validated config of this run. Its sweep and report sections are the experiment's
    // (config_hash leaves them out); its seed is the point's seed.
    ExperimentConfig config;
};

// Expands `cfg` (loaded from `path` with `overrides`) into its points, validating every point like a
// config of its own (a bad grid value names "sweep.grid.<key>" and its file:line:col). A command-line
// override of a swept key is an error that suggests overriding the grid instead. Throws ConfigError.
std::vector<SweepPoint> expand_sweep(const ExperimentConfig& cfg, const std::string& path,
                                     const std::vector<std::string>& overrides = {}, const LoadFlags& flags = {});

// sweep.only: the points that make up the study (those whose id matches one of the patterns), in sweep
// order; all of them when it is empty. Throws ConfigError naming a pattern that matches no point (a stale
// list). `relpos run` and its MPI followers select with it before --only; reports read every point.
std::vector<SweepPoint> select_study(const std::vector<SweepPoint>& points, const ExperimentConfig& cfg,
                                     const std::string& config_path);

struct Shard {
    std::size_t index = 0;  // 0-based, < count (Slurm: ${SLURM_ARRAY_TASK_ID} with --array=0-(count-1))
    std::size_t count = 1;
};

// Parses "i/n" (the value of --shard). Throws ConfigError naming the input and the expected form.
Shard parse_shard(const std::string& text);

// --start-before: "+90m", "+2h", "+45s" (from `now`) or "@1764000000" (a Unix time, e.g. from
// `date -d 14:00 +%s`): the time after which `relpos run` starts no new run (the running ones finish).
// Returns the Unix time; throws ConfigError with the accepted forms.
std::int64_t parse_start_before(const std::string& text, std::int64_t now, const std::string& option = "--start-before");
// The points whose position in `points` is i modulo n: shards 0..n-1 are disjoint and cover all points.
std::vector<SweepPoint> select_shard(const std::vector<SweepPoint>& points, std::size_t i, std::size_t n);
inline std::vector<SweepPoint> select_shard(const std::vector<SweepPoint>& points, const Shard& s) {
    return select_shard(points, s.index, s.count);
}
// --only GLOB: the points whose id matches the shell pattern (fnmatch: * ? [...]), in order, e.g.
// 'position=type-alibi_seed=*' or one run's id; their ids and run names are the whole sweep's. Throws
// ConfigError naming the option (`relpos run --only`, `relpos eval --runs`), the pattern, the config and some
// of its ids when none matches.
std::vector<SweepPoint> select_matching(const std::vector<SweepPoint>& points, const std::string& glob,
                                        const std::string& config_path, const std::string& option = "--only");

}  // namespace relpos
