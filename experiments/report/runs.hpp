// Inside the report: the finished runs of an experiment as results.json records them, and their labels on
// the report's axes. Shared by the tables (tables.cpp) and the plots (plots.cpp).
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "experiments/config/config.hpp"

namespace relpos {

struct RunResult {
    std::string id;
    std::map<std::string, std::string> labels;
    std::map<std::string, double> metrics;
    std::string commit, machine, finished;
    std::vector<std::string> trained_on;  // every machine that trained it (results.json trained_on; may be empty)
    double train_seconds = 0;
    double train_cpu_seconds = -1;  // results.json train_cpu_seconds (core-seconds); -1: not recorded
    long steps = 0, parameters = 0, epochs = 0, best_step = 0;
    std::string stop_reason;  // "" for runs from before the stopping rule
    // The competence gate (results.json "competence", train.stop.target_metric): -1 no record, 0 not
    // reached, 1 reached; what was asked ("val.accuracy >= 99").
    int competent = -1;
    std::string competence;
    std::filesystem::path dir;  // where its files are (through a link of a shared store)
    std::string entry;          // its name in the experiment's runs/ (the experiment's id for a shared run)
};

// Every runs/*/results.json under `dir`, in directory order. Throws CheckpointError naming a file that
// is not a finished run's results.
std::vector<RunResult> read_runs(const std::filesystem::path& dir);

// A run's label on a report axis: its value of the swept key, or of each key of a "a+b" axis joined by
// " · " ("" when it has none).
std::string label_of(const RunResult& r, const std::string& key);
// Row (or column) labels in the order the sweep lists them; labels of runs no longer in the grid go last.
std::vector<std::string> axis_order(const ExperimentConfig& cfg, const std::string& key, const std::vector<RunResult>& runs);
bool is_number(const std::string& s);

}  // namespace relpos
