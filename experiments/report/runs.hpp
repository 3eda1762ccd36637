// Inside the report: the finished runs of an experiment as results.json records them, and their labels on
// the report's axes. Shared by the tables (tables.cpp) and the plots (plots.cpp).
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "experiments/config/config.hpp"
#include "experiments/run/record.hpp"

namespace relpos {

// A finished run as the report reads it: its results.json (experiments/run/record.hpp), with each
// <split>.<metric>@mean added (the mean over the lengths of a <split>.<metric>@<n> family), and where it is.
struct RunResult : RunRecord {
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
