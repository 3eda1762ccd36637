// `relpos report DIR`: everything read and checked first (tables.cpp, plots.cpp), then written: the three
// tables together or not at all, then the plots.
#include "experiments/report/report.hpp"

#include <filesystem>

#include <fmt/format.h>

#include "experiments/report/plots.hpp"
#include "experiments/util/files.hpp"

namespace relpos {

namespace fs = std::filesystem;

int cmd_report(const std::string& dir) {
    // Everything is read and checked first, then written: exit code 2 leaves the directory as it was.
    ReportTables t = build_report(dir);
    if (t.runs == 0) throw ConfigError(fmt::format("{}: no finished runs yet (runs/*/results.json)", dir));
    const fs::path d(dir);
    const std::vector<std::pair<std::string, std::string>> tables = {
        {"report.md", render_markdown(t)}, {"report.csv", render_csv(t)}, {"report.json", render_json(t)}};
    const PlotInputs plot_inputs = read_plot_inputs(d, t);
    for (const auto& [name, text] : tables) {
        const std::string format = name == "report.md" ? "Markdown" : name == "report.csv" ? "CSV" : "JSON";
        check_output_path(d / name, false, "its " + format + " table");
        check_output_path(d / (name + ".tmp"), false, "the new " + name + " before it replaces the old one");
    }
    if (plot_inputs.gnuplot) check_output_path(d / "plots", true, "the plots");
    // Each table goes to <name>.tmp, and only once all three are complete are they renamed into place;
    // a failure (disk full) removes the .tmp files and leaves the old tables.
    std::vector<std::pair<fs::path, std::string>> files;
    for (const auto& [name, text] : tables) files.emplace_back(d / name, text);
    write_files_atomic(files);
    const std::string& md = tables[0].second;
    std::string note;
    auto plots = draw_plots(d, t, plot_inputs, &note);
    fmt::print("{}\n", md);
    fmt::print("written: {}/report.md, report.csv, report.json\n", dir);
    for (auto& p : plots) fmt::print("plot: {}\n", p);
    if (!note.empty()) fmt::print("note: {}\n", note);
    return 0;
}

}  // namespace relpos
