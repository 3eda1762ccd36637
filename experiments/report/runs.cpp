// Reading the finished runs of an experiment (results.json) for the report.
#include "experiments/report/runs.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>

#include <fmt/format.h>

#include "experiments/config/config.hpp"
#include "experiments/report/report.hpp"
#include "experiments/tasks/metric_names.hpp"
#include "experiments/train/checkpoint.hpp"
#include "experiments/util/files.hpp"

namespace relpos {

namespace fs = std::filesystem;

std::vector<RunResult> read_runs(const fs::path& dir) {
    std::vector<RunResult> out;
    const fs::path runs = dir / "runs";
    if (!fs::exists(runs)) return out;
    std::vector<std::pair<std::string, fs::path>> paths;  // (name in runs/, where its files are)
    std::size_t as_text = 0;
    for (auto& e : fs::directory_iterator(runs)) {
        fs::path run = e.path();
        // a run link that lost its link-ness (a checkout without symbolic links) is read through, never
        // silently left out of the table
        if (const std::string target = link_left_as_text(run); !target.empty() && fs::is_directory(runs / target)) {
            run = runs / target;
            ++as_text;
        }
        if (fs::exists(run / "results.json")) paths.emplace_back(e.path().filename().string(), run);
    }
    if (as_text > 0)
        fmt::print(stderr,
                   "note: {}: {} run link(s) are plain files holding their target's path (a checkout or copy without "
                   "symbolic links); read through them. `relpos run` of the experiment's config turns them back into "
                   "links\n",
                   runs.string(), as_text);
    std::sort(paths.begin(), paths.end());
    for (auto& [entry, p] : paths) {
        RunResult r;
        try {
            static_cast<RunRecord&>(r) = read_run_record(p / "results.json");
            if (r.id.empty())
                throw CheckpointError(fmt::format("{} is not a finished run's results (expected a JSON object with "
                                                  "\"id\", \"labels\" and \"metrics\")",
                                                  (p / "results.json").string()));
        } catch (const CheckpointError& e) {
            throw CheckpointError(std::string(e.what()) + "; remove the run directory or run it again");
        }
        {  // <split>.<metric>@mean: the mean over the lengths of every <split>.<metric>@<n> family, each length
           // weighted alike (Ruoss et al.'s and Kazemnejad et al.'s average over test lengths)
            std::map<std::string, std::pair<double, std::size_t>> by_family;
            for (const auto& [k, v] : r.metrics) {
                const auto a = metric_names::at_length(k);
                if (!a) continue;
                auto& f = by_family[a->family];
                f.first += v;
                ++f.second;
            }
            for (const auto& [family, sum] : by_family) r.metrics.emplace(family + "@mean", sum.first / double(sum.second));
        }
        r.dir = p;
        r.entry = entry;
        out.push_back(std::move(r));
    }
    return out;
}

bool is_number(const std::string& s) {
    char* end = nullptr;
    std::strtod(s.c_str(), &end);
    return !s.empty() && *end == '\0';
}

// Row (or column) labels in the order the sweep lists them.
std::vector<std::string> axis_order(const ExperimentConfig& cfg, const std::string& key, const std::vector<RunResult>& runs) {
    if (key.empty()) return {""};
    std::vector<std::string> order = report_axis_labels(cfg, key);
    for (const auto& r : runs) {  // labels of runs no longer in the grid go last
        const std::string l = label_of(r, key);
        if (!l.empty() && std::find(order.begin(), order.end(), l) == order.end()) order.push_back(l);
    }
    return order;
}

// A run's label on a report axis: its value of the swept key, or of each key of a "a+b" axis joined by
// " · " ("" when it has none).
std::string label_of(const RunResult& r, const std::string& key) {
    if (key.empty()) return "";
    std::string out;
    const auto parts = report_axis_parts(key);
    for (std::size_t i = 0; i < parts.size(); ++i) {
        auto it = r.labels.find(parts[i]);
        if (it == r.labels.end()) return "";
        out += (i ? kAxisLabelJoin : "") + it->second;
    }
    return out;
}

}  // namespace relpos
