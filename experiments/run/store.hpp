// The run store: run directories on disk, what a finished run recorded, locks that keep two processes
// from training one run, and the links of a shared store (run_store). Reading and checking only; training
// a run is run_one.hpp, reading its results.json record.hpp.
#pragma once

#include <algorithm>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "experiments/config/config.hpp"
#include "experiments/run/record.hpp"
#include "experiments/run/sweep.hpp"
#include "nn/transformer.hpp"

namespace relpos {

// Nothing can be created under a results_dir (or a run_store: `key`) that runs through a regular file or an
// unwritable directory: found before the data is loaded (root ignores permissions, not file types).
void check_results_dir(const std::string& config_path, const std::filesystem::path& exp_dir,
                       const std::string& key = "results_dir");


// The run directory a point already has, checked before anything is printed or written: a finished
// run must come from the same config (it is skipped, never redone); an interrupted run resumes only
// from a complete checkpoint of the same config and model shape. `equivalent`: the caller found run_dir
// to be the same run under another stop (experiment.cpp asks, for runs in a store and outside one).
void check_existing_run(const SweepPoint& p, const std::filesystem::path& run_dir, const nn::Transformer<float>& model,
                        bool equivalent = false);
// The same without the model: the finished or started run's config against the point's (no data loaded, nothing
// written; `relpos run --list` refuses what `relpos run` would). True when a checkpoint of the point's config waits to
// be resumed (check_existing_run then checks its tensors against the model).
bool check_existing_run_config(const SweepPoint& p, const std::filesystem::path& run_dir, bool equivalent = false);

// An exclusive lock on a run directory for as long as one process trains it (released by the kernel when
// the process ends, however it ends). A second `relpos run` of the same run skips it instead of training
// it twice and corrupting its files. The lock file says "pid N on HOST" while (and after) a process trains it.
class RunLock {
public:
    explicit RunLock(const std::filesystem::path& dir);
    ~RunLock();
    RunLock(const RunLock&) = delete;
    RunLock& operator=(const RunLock&) = delete;
    bool held() const { return holder_.empty(); }
    const std::string& holder() const { return holder_; }

private:
    int fd_ = -1;
    std::string holder_;
};

// What --list says of a run that has not finished: who trains it (the lock's process, when it is alive
// on this machine) or that it was interrupted, and how far it got (the last step in metrics.jsonl).
// Reads only: taking the lock to ask would make a trainer starting that instant skip the run.
std::string unfinished_run_state(const std::filesystem::path& dir);

// runs/<id> -> the shared run directory (a relative link, so the tree can move as a whole). An existing
// entry must already be that link: anything else is the user's, and is never replaced. plan_shared_links
// checks every point and creates nothing (a ConfigError names the first entry in the way);
// make_shared_links then creates the run directories and the links.
struct SharedLink {
    std::filesystem::path link;  // empty: linked already, only the run directory to make
    std::filesystem::path target, rel;
    std::string note;            // said when the link is made (a relinked unfinished run)
};
std::vector<SharedLink> plan_shared_links(const std::vector<SweepPoint>& points, const std::filesystem::path& exp_dir,
                                          const std::function<std::filesystem::path(const SweepPoint&)>& run_dir_of,
                                          const std::string& config_path);
void make_shared_links(const std::vector<SharedLink>& links);

}  // namespace relpos
