// A finished run's results.json, read in one place: the runner (skip a finished run, refuse another
// config's, continue a capped one, --list its cost), the report's tables and plots, and eval's thread count
// all read the same fields the same way. The file is written by run_one.cpp.
#pragma once

#include <algorithm>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace relpos {

struct RunRecord {
    std::string id;
    std::map<std::string, std::string> labels;  // the run's value of each swept key
    std::map<std::string, double> metrics;      // finite figures only: a null (not a finite number) is left out
    std::string config_hash;                    // "": records none, so it matches no config (refused, never overwritten)
    std::string commit, machine;
    std::vector<std::string> trained_on;  // every machine that trained it (since 2026-11-27; may be empty)
    std::string finished;                 // when it finished (ISO 8601, sorts as time)
    std::string stop_reason;              // "" for runs from before the stopping rule
    double train_seconds = 0;             // wall-clock
    double train_cpu_seconds = -1;        // core-seconds; -1: not recorded (before 2026-11-28, or resumed from older checkpoints)
    long steps = 0, parameters = 0, epochs = 0, best_step = 0;
    int threads = -1, ranks = 1;  // threads -1: not recorded
    // The competence gate (results.json "competence", train.stop.target_metric): -1 no record, 0 not
    // reached, 1 reached; what was asked ("val.accuracy >= 99").
    int competent = -1;
    std::string competence;

    // What its training cost in core-seconds: the CPU time where recorded, else wall time x threads x ranks.
    double core_seconds() const {
        return train_cpu_seconds >= 0 ? train_cpu_seconds
                                      : train_seconds * double(std::max(1, threads)) * double(std::max(1, ranks));
    }
};

// Throws CheckpointError naming the file and the key when it is not what a finished run writes (not a JSON
// object, a key of the wrong type; the caller adds what to do). A key that is absent keeps its default:
// older versions recorded fewer.
RunRecord read_run_record(const std::filesystem::path& results);

// The runner's read, which never throws: a file read_run_record refuses is a record with no config_hash
// (it matches no config, so the run is refused, never overwritten); `why`, when given, gets the reason.
RunRecord read_finished_run(const std::filesystem::path& results, std::string* why = nullptr);

}  // namespace relpos
