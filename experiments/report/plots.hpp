// Inside the report: the plots (learning curves, metric against row, attention maps, metric against
// length) drawn with gnuplot, read and checked before anything is written (cmd_report in report.cpp).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "experiments/report/report.hpp"
#include "experiments/report/runs.hpp"

namespace relpos {

// Everything the plots read from the runs, read (and checked) before any file is written: a broken
// metrics.jsonl is then exit code 2 with nothing written, not a half-made report.
struct PlotInputs {
    bool gnuplot = false;
    std::vector<RunResult> runs;
    std::vector<LearningCurve> curves;  // runs[i]'s, when the learning curves are drawn
};
PlotInputs read_plot_inputs(const std::filesystem::path& dir, const ReportTables& t);
std::vector<std::string> draw_plots(const std::filesystem::path& dir, const ReportTables& t, const PlotInputs& in,
                                    std::string* note);

// A path the report writes that something else occupies (a directory named report.md, a file named
// plots): one sentence naming it, exit code 2, before anything is written.
void check_output_path(const std::filesystem::path& p, bool directory, const std::string& what);

}  // namespace relpos
