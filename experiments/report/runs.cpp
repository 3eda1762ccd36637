// Reading the finished runs of an experiment (results.json) for the report.
#include "experiments/report/runs.hpp"

#include "experiments/tasks/metric_names.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "experiments/config/config.hpp"
#include "experiments/data/corpus.hpp"
#include "experiments/data/json.hpp"
#include "experiments/report/report.hpp"
#include "experiments/report/runs.hpp"

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
        const std::string file = (p / "results.json").string();
        const Json n = parse_json_or_throw<CheckpointError>(read_text_file(file), file);
        // A results.json that is not the object a finished run writes (empty, a scalar, a list, wrong types)
        // is named with what it lacks, not reported as an internal error.
        if (!n.is_object() || !n.contains("id") || !n["id"].is_string() ||
            (n.contains("metrics") && !n["metrics"].is_object()) || (n.contains("labels") && !n["labels"].is_object()))
            throw CheckpointError(fmt::format("{} is not a finished run's results (expected a JSON object with \"id\", "
                                              "\"labels\" and \"metrics\"); remove the run directory or run it again",
                                              file));
        RunResult r;
        auto wrong = [&](const std::string& key, const char* what) {
            return CheckpointError(fmt::format("{}: \"{}\" is not {}; remove the run directory or run it again", file,
                                               key, what));
        };
        r.id = n["id"].get<std::string>();
        const Json labels = n.value("labels", Json::object()), metrics = n.value("metrics", Json::object());
        for (const auto& [k, v] : labels.items()) {
            if (!v.is_string()) throw wrong("labels." + k, "a string");
            r.labels[k] = v.get<std::string>();
        }
        for (const auto& [k, v] : metrics.items()) {
            if (v.is_null()) continue;  // null: not a finite number (a diverged run); left out of the means
            if (!v.is_number()) throw wrong("metrics." + k, "a number or null");
            r.metrics[k] = v.get<double>();
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
        auto text = [&](const char* key) {
            if (!n.contains(key)) return std::string();
            if (!n[key].is_string()) throw wrong(key, "a string");
            return n[key].get<std::string>();
        };
        auto number = [&](const char* key) {
            if (!n.contains(key) || n[key].is_null()) return 0.0;
            if (!n[key].is_number()) throw wrong(key, "a number");
            return n[key].get<double>();
        };
        r.commit = text("commit");
        r.machine = text("machine");
        if (n.contains("trained_on")) {  // since 2026-11-27
            const Json& t = n["trained_on"];
            if (!is_string_list(t))
                throw wrong("trained_on", "a list of strings");
            r.trained_on = t.get<std::vector<std::string>>();
        }
        r.finished = text("finished");
        r.stop_reason = text("stop_reason");
        r.train_seconds = number("train_seconds");
        if (n.contains("train_cpu_seconds")) r.train_cpu_seconds = number("train_cpu_seconds");  // since 2026-11-28
        auto whole = [&](const char* key) {
            const double v = number(key);
            if (!(v >= 0 && v <= 1e15 && v == std::floor(v))) throw wrong(key, "a whole number");
            return static_cast<long>(v);
        };
        r.steps = whole("steps");
        r.parameters = whole("parameters");
        r.epochs = whole("epochs_completed");
        r.best_step = whole("best_step");
        if (n.contains("competence")) {
            const Json& c = n["competence"];
            if (!c.is_object() || !c.contains("reached") || !c["reached"].is_boolean() || !c.contains("metric") ||
                !c["metric"].is_string() || !c.contains("target") || !c["target"].is_number())
                throw wrong("competence", "an object with \"metric\", \"target\" and \"reached\"");
            r.competent = c["reached"].get<bool>() ? 1 : 0;
            r.competence = fmt::format("{} >= {}", c["metric"].get<std::string>(), c["target"].get<double>());
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
