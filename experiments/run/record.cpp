#include "experiments/run/record.hpp"

#include <cmath>

#include <fmt/format.h>

#include "experiments/data/json.hpp"
#include "experiments/train/checkpoint.hpp"
#include "experiments/util/files.hpp"

namespace relpos {

namespace fs = std::filesystem;

RunRecord read_run_record(const fs::path& results) {
    const std::string file = results.string();
    const Json n = parse_json_or_throw<CheckpointError>(read_text_file(file), file);
    if (!n.is_object())
        throw CheckpointError(fmt::format("{} is not a finished run's results (expected a JSON object with \"id\", "
                                          "\"labels\" and \"metrics\")",
                                          file));
    auto wrong = [&](const std::string& key, const char* what) {
        return CheckpointError(
            fmt::format("{}: \"{}\" is not {}", file, key, what));
    };
    auto text = [&](const char* key) {
        if (!n.contains(key)) return std::string();
        if (!n[key].is_string()) throw wrong(key, "a string");
        return n[key].get<std::string>();
    };
    auto number = [&](const char* key, double absent) {
        if (!n.contains(key) || n[key].is_null()) return absent;
        if (!n[key].is_number()) throw wrong(key, "a number");
        return n[key].get<double>();
    };
    auto whole = [&](const char* key, long absent) {
        const double v = number(key, double(absent));
        if (v == double(absent)) return absent;
        if (!(v >= 0 && v <= 1e15 && v == std::floor(v))) throw wrong(key, "a whole number");
        return static_cast<long>(v);
    };
    auto object = [&](const char* key) {
        if (!n.contains(key)) return Json::object();
        if (!n[key].is_object()) throw wrong(key, "an object");
        return n[key];
    };
    RunRecord r;
    r.id = text("id");
    const Json labels = object("labels"), metrics = object("metrics");  // named: items() of a temporary dangles
    for (const auto& [k, v] : labels.items()) {
        if (!v.is_string()) throw wrong("labels." + k, "a string");
        r.labels[k] = v.get<std::string>();
    }
    for (const auto& [k, v] : metrics.items()) {
        if (v.is_null()) continue;  // not a finite number (a diverged run): left out of the means
        if (!v.is_number()) throw wrong("metrics." + k, "a number or null");
        r.metrics[k] = v.get<double>();
    }
    r.config_hash = text("config_hash");
    r.commit = text("commit");
    r.machine = text("machine");
    if (n.contains("trained_on")) {
        if (!is_string_list(n["trained_on"])) throw wrong("trained_on", "a list of strings");
        r.trained_on = n["trained_on"].get<std::vector<std::string>>();
    }
    r.finished = text("finished");
    r.stop_reason = text("stop_reason");
    r.train_seconds = number("train_seconds", 0);
    r.train_cpu_seconds = number("train_cpu_seconds", -1);
    r.steps = whole("steps", 0);
    r.parameters = whole("parameters", 0);
    r.epochs = whole("epochs_completed", 0);
    r.best_step = whole("best_step", 0);
    r.threads = static_cast<int>(std::min(whole("threads", -1), 1L << 20));
    r.ranks = static_cast<int>(std::min(whole("ranks", 1), 1L << 20));
    if (n.contains("competence")) {
        const Json& c = n["competence"];
        if (!c.is_object() || !c.contains("reached") || !c["reached"].is_boolean() || !c.contains("metric") ||
            !c["metric"].is_string() || !c.contains("target") || !c["target"].is_number())
            throw wrong("competence", "an object with \"metric\", \"target\" and \"reached\"");
        r.competent = c["reached"].get<bool>() ? 1 : 0;
        r.competence = fmt::format("{} >= {}", c["metric"].get<std::string>(), c["target"].get<double>());
    }
    return r;
}

RunRecord read_finished_run(const fs::path& results, std::string* why) {
    try {
        return read_run_record(results);
    } catch (const std::exception& e) {
        if (why) *why = e.what();
        return RunRecord{};
    }
}

}  // namespace relpos
