// relpos report: tables from fixture runs, paired differences, contrasts, learning curves, metric against
// length, the competence view of gated runs and report axes that join several swept keys.
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "experiments/data/corpus.hpp"
#include "experiments/tasks/multi30k.hpp"
#include "experiments/data/json.hpp"
#include "experiments/eval/significance.hpp"
#include "experiments/report/report.hpp"
#include "experiments/tasks/metric_names.hpp"

using namespace relpos;
namespace fs = std::filesystem;

namespace {

std::string fresh_dir(const std::string& name) {
    const fs::path d = fs::temp_directory_path() / ("relpos-test-" + name + "-" + std::to_string(getpid()));
    fs::remove_all(d);
    fs::create_directories(d);
    return d.string();
}

// A finished-experiment directory with hand-written runs: tasks a, b x encodings p, q x seeds 1, 2.
// Each run: {"task", "pos", seed, test accuracy, reached the target or not (-1: no competence record)}.
struct FakeRun {
    std::string task, pos;
    int seed;
    double test;
    int reached;
};

fs::path experiment(const std::string& name, const std::vector<FakeRun>& runs, const std::string& rows,
                    const std::string& columns) {
    const fs::path dir = fs::temp_directory_path() / ("relpos-report-" + name + "-" + std::to_string(getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir / "runs");
    std::ofstream(dir / "experiment.yaml")
        << "name: " << name << "\ndata: {task: reverse, synthetic: {train_len: [1, 4], test_len: [5, 8]}}\n"
        << "model: {family: encoder_only}\n"
        << "eval: {splits: [val, test], metrics: [accuracy]}\n"
        << "sweep:\n  grid:\n    data.task: [reverse, copy]\n    model.position.type: [rope, alibi]\n  seeds: [1, 2]\n"
        << "report: {rows: \"" << rows << "\", columns: \"" << columns << "\", metrics: [test.accuracy]}\n";
    for (const auto& r : runs) {
        const std::string id = "task=" + r.task + "_type=" + r.pos + "_seed=" + std::to_string(r.seed);
        fs::create_directories(dir / "runs" / id);
        Json j = {{"id", id},
                  {"labels", {{"data.task", r.task}, {"model.position.type", r.pos}, {"seed", std::to_string(r.seed)}}},
                  {"metrics", {{"test.accuracy", r.test}, {"val.accuracy", r.reached == 1 ? 99.5 : 50.0}}}};
        if (r.reached >= 0)
            j["competence"] = {{"metric", "val.accuracy"}, {"target", 99}, {"reached", r.reached == 1}, {"step", r.reached ? 100 : 0}};
        std::ofstream(dir / "runs" / id / "results.json") << j.dump();
    }
    return dir;
}

// Replaces the report's `metrics: [test.accuracy]}` in an experiment() directory's experiment.yaml by `with`
// (more metrics, a baseline, contrasts).
void set_report_tail(const fs::path& dir, const std::string& with) {
    std::string yaml;
    {
        std::ifstream in(dir / "experiment.yaml");
        yaml.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    }
    const std::string from = "metrics: [test.accuracy]}";
    const auto at = yaml.find(from);
    REQUIRE(at != std::string::npos);
    yaml.replace(at, from.size(), with);
    std::ofstream(dir / "experiment.yaml") << yaml;
}

// The paired t of differences d (mean / (sd / √n)), and the two-sided p of a t with 2 degrees of freedom in
// closed form, 1 - |t|/√(2+t²): a second computation of what the report gets from Boost.Math.
double paired_t(const std::vector<double>& d) {
    double mean = 0, q = 0;
    for (double x : d) mean += x / double(d.size());
    for (double x : d) q += (x - mean) * (x - mean);
    return mean / (std::sqrt(q / double(d.size() - 1)) / std::sqrt(double(d.size())));
}
double two_sided_p_df2(double t) { return 1 - std::abs(t) / std::sqrt(2 + t * t); }

}  // namespace

TEST_CASE("report/rows may join several swept keys with '+'", "[report]") {
    const fs::path dir = experiment("joined",
                                    {{"reverse", "rope", 1, 10, -1}, {"reverse", "rope", 2, 20, -1}, {"copy", "rope", 1, 90, -1},
                                     {"copy", "alibi", 1, 70, -1}},
                                    "data.task+model.position.type", "");
    const ReportTables t = build_report(dir.string());
    // every combination in the sweep's order, the first key slowest
    CHECK(t.rows == std::vector<std::string>{"reverse · rope", "reverse · alibi", "copy · rope", "copy · alibi"});
    CHECK(t.cells.at({"reverse · rope", "", "test.accuracy"}).mean == Approx(15));
    CHECK(t.cells.at({"reverse · rope", "", "test.accuracy"}).n == 2);
    CHECK(t.cells.at({"copy · rope", "", "test.accuracy"}).mean == Approx(90));  // not mixed with reverse
    CHECK(t.cells.at({"reverse · alibi", "", "test.accuracy"}).n == 0);
    CHECK_THAT(render_markdown(t), Catch::Contains("| copy · alibi | 70.00 (n=1) |"));
    fs::remove_all(dir);
}

TEST_CASE("report/a report of fewer runs than its sweep says so at its top", "[report]") {
    // 2 tasks x 2 encodings x 2 seeds = 8 points; 3 finished, then all 8. A run outside the sweep (another
    // experiment's, read through a stale link) counts toward neither.
    std::vector<FakeRun> some{{"reverse", "rope", 1, 10, -1}, {"reverse", "rope", 2, 20, -1}, {"copy", "alibi", 1, 70, -1},
                              {"copy", "nope", 1, 5, -1}};
    const fs::path part = experiment("interim", some, "model.position.type", "data.task");
    const ReportTables t = build_report(part.string());
    CHECK(t.sweep_points == 8);
    CHECK(t.sweep_finished == 3);
    const std::string md = render_markdown(t);
    CHECK_THAT(md, Catch::Contains("**3 of the sweep's 8 runs have finished**, and this report is of them alone"));
    CHECK(md.find("of the sweep's") < md.find("| model.position.type"));  // above the tables, not under them
    {   // sweep.only: the study is the reverse points (4), of which 2 have finished; copy's run counts toward neither
        std::string yaml;
        {
            std::ifstream in(part / "experiment.yaml");
            yaml.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
        }
        const std::string seeds = "  seeds: [1, 2]\n";
        REQUIRE(yaml.find(seeds) != std::string::npos);
        yaml.replace(yaml.find(seeds), seeds.size(), seeds + "  only: ['task=reverse_*']\n");
        std::ofstream(part / "experiment.yaml") << yaml;
        const ReportTables only = build_report(part.string());
        CHECK(only.sweep_points == 4);
        CHECK(only.sweep_finished == 2);
        CHECK_THAT(render_markdown(only), Catch::Contains("**2 of the sweep's 4 runs have finished**"));
    }
    fs::remove_all(part);
    std::vector<FakeRun> all;
    for (const char* task : {"reverse", "copy"})
        for (const char* pos : {"rope", "alibi"})
            for (int seed : {1, 2}) all.push_back({task, pos, seed, 50, -1});
    const fs::path whole = experiment("interim_whole", all, "model.position.type", "data.task");
    const ReportTables w = build_report(whole.string());
    CHECK(w.sweep_finished == 8);
    CHECK_THAT(render_markdown(w), !Catch::Contains("of the sweep's"));
    fs::remove_all(whole);
}

TEST_CASE("report/gated runs: competent counts, metrics over competent runs, max over all", "[report]") {
    const fs::path dir = experiment("gated",
                                    {{"reverse", "rope", 1, 10, 1}, {"reverse", "rope", 2, 30, 0}, {"reverse", "alibi", 1, 5, 0},
                                     {"reverse", "alibi", 2, 7, 0}, {"copy", "rope", 1, 80, 1}, {"copy", "rope", 2, 60, 1}},
                                    "model.position.type", "data.task");
    const ReportTables t = build_report(dir.string());
    CHECK(t.competence_what == "val.accuracy >= 99");
    CHECK(t.competent.at({"rope", "reverse"}) == std::make_pair(std::size_t(1), std::size_t(2)));
    CHECK(t.competent.at({"alibi", "reverse"}) == std::make_pair(std::size_t(0), std::size_t(2)));
    CHECK(t.competent.at({"rope", "copy"}) == std::make_pair(std::size_t(2), std::size_t(2)));
    // over the competent runs only: rope on reverse is seed 1's 10, not the mean 20 of both
    CHECK(t.competent_cells.at({"rope", "reverse", "test.accuracy"}).mean == Approx(10));
    CHECK(t.competent_cells.at({"rope", "reverse", "test.accuracy"}).n == 1);
    CHECK(t.competent_cells.at({"alibi", "reverse", "test.accuracy"}).n == 0);
    CHECK(t.cells.at({"rope", "reverse", "test.accuracy"}).mean == Approx(20));  // all runs, as before
    // the best run of a cell, whether competent or not
    CHECK(t.max_cells.at({"rope", "reverse", "test.accuracy"}) == Approx(30));
    CHECK(t.max_cells.at({"alibi", "reverse", "test.accuracy"}) == Approx(7));
    const std::string md = render_markdown(t);
    CHECK_THAT(md, Catch::Contains("### Competence") && Catch::Contains("3 of 6 runs") &&
                       Catch::Contains("| rope | 1/2 | 2/2 |") && Catch::Contains("| alibi | 0/2 | – |"));
    const Json cells = Json::parse(render_json(t))["cells"];
    bool seen = false;
    for (const auto& c : cells)
        if (c["row"] == "rope" && c["column"] == "reverse") {
            seen = true;
            CHECK(c["competent"]["reached"] == 1);
            CHECK(c["competent"]["runs"] == 2);
            CHECK(c["competent"]["mean"].get<double>() == Approx(10));
            CHECK(c["max"].get<double>() == Approx(30));
        }
    CHECK(seen);
    // no competence record at all: no section
    const fs::path plain = experiment("plain", {{"reverse", "rope", 1, 10, -1}}, "model.position.type", "data.task");
    CHECK(render_markdown(build_report(plain.string())).find("### Competence") == std::string::npos);
    fs::remove_all(dir);
    fs::remove_all(plain);
}

TEST_CASE("report/gated runs: paired comparisons keep only the seeds competent in both rows", "[report]") {
    // rope competent on seeds 1, 3, 4; alibi on 1, 2, 4: the seeds both rows learned are 1 and 4
    const fs::path dir = experiment("gatedpairs",
                                    {{"reverse", "rope", 1, 10, 1}, {"reverse", "rope", 2, 30, 0}, {"reverse", "rope", 3, 20, 1},
                                     {"reverse", "rope", 4, 40, 1}, {"reverse", "alibi", 1, 5, 1}, {"reverse", "alibi", 2, 7, 1},
                                     {"reverse", "alibi", 3, 9, 0}, {"reverse", "alibi", 4, 30, 1}},
                                    "model.position.type", "");
    set_report_tail(dir, "metrics: [test.accuracy], baseline: alibi, contrasts: [[rope, alibi]], bootstrap: 0}");
    const ReportTables t = build_report(dir.string());
    const auto& d = t.paired.at({"rope", "test.accuracy"});
    CHECK(d.n == 2);                   // all four seeds would give n = 4, mean 12.25
    CHECK(d.mean == Approx(7.5));      // (10 - 5 + 40 - 30) / 2
    const auto& c = t.contrast_paired.at({"rope", "alibi", "test.accuracy"});
    CHECK(c.n == 2);
    CHECK(c.mean == Approx(7.5));
    // two gated pairs are too few seeds for a verdict: described, outside the Holm family
    CHECK(t.family_t.empty());
    REQUIRE(!t.no_verdict_t.empty());
    CHECK(t.no_verdict_t.front().n == 2);
    CHECK(t.no_verdict_t.front().no_verdict == "too few seeds");
    const std::string md = render_markdown(t);
    CHECK_THAT(md, Catch::Contains("Only competent runs are paired"));
    // gated runs keep the checkpoint with the highest target metric, and the training table says so
    CHECK_THAT(md, Catch::Contains("| best step | best checkpoint by |") &&
                       Catch::Contains("| highest val.accuracy (ties: lower validation loss) |"));
    CHECK(md.find("lowest validation loss |") == std::string::npos);
    const Json training = Json::parse(render_json(t))["training"];
    REQUIRE(training.size() == 2);
    CHECK(training[0]["best_by"] == Json{{"highest val.accuracy (ties: lower validation loss)", 4}});
    // without competence records every seed pairs, as before
    const fs::path plain = experiment("plainpairs",
                                      {{"reverse", "rope", 1, 10, -1}, {"reverse", "rope", 2, 30, -1},
                                       {"reverse", "alibi", 1, 5, -1}, {"reverse", "alibi", 2, 7, -1}},
                                      "model.position.type", "");
    set_report_tail(plain, "metrics: [test.accuracy], baseline: alibi, bootstrap: 0}");
    const ReportTables u = build_report(plain.string());
    CHECK(u.paired.at({"rope", "test.accuracy"}).n == 2);
    CHECK(u.paired.at({"rope", "test.accuracy"}).mean == Approx(14));
    CHECK(render_markdown(u).find("Only competent runs are paired") == std::string::npos);
    CHECK_THAT(render_markdown(u), Catch::Contains("| lowest validation loss |"));
    CHECK(Json::parse(render_json(u))["training"][0]["best_by"] == Json{{"lowest validation loss", 2}});
    fs::remove_all(dir);
    fs::remove_all(plain);
}

TEST_CASE("report/<split>.<metric>@mean is the mean over the lengths, each length alike", "[report]") {
    const fs::path dir = experiment("lenmean", {{"reverse", "rope", 1, 10, -1}, {"reverse", "rope", 2, 20, -1}},
                                    "model.position.type", "");
    {  // per-length figures as a length-generalization task writes them; the pooled test.accuracy differs
        set_report_tail(dir, "metrics: [test.accuracy, test.accuracy@mean]}");
        const fs::path run = dir / "runs" / "task=reverse_type=rope_seed=1";
        Json j = Json::parse(std::ifstream(run / "results.json"));
        j["metrics"]["test.accuracy@5"] = 10.0;
        j["metrics"]["test.accuracy@6"] = 30.0;
        j["metrics"]["test.accuracy@8"] = 80.0;
        j["metrics"]["test.token_accuracy@5"] = 1.0;  // another family: not mixed in
        std::ofstream(run / "results.json") << j.dump();
    }
    const ReportTables t = build_report(dir.string());
    const Stats m = t.cells.at({"rope", "", "test.accuracy@mean"});
    CHECK(m.n == 1);  // seed 2 has no per-length figures
    CHECK(m.mean == Approx(40));  // (10 + 30 + 80) / 3
    CHECK(t.cells.at({"rope", "", "test.accuracy"}).mean == Approx(15));
    CHECK(t.length_cells.count({"rope", "", "test.accuracy@mean"}) == 0);  // not a length
    fs::remove_all(dir);
}

TEST_CASE("report/sweep.cells: contrasts pair rows that sit at different learning rates, Holm over the family", "[report]") {
    // The shape of configs/ruoss/table.yaml: each encoding at its own rate (sweep.cells), rows by encoding,
    // a contrast between two rows whose runs have different train.lr. Paired by seed: (60-50, 64-51, 70-55).
    const std::string dir = fresh_dir("report_cells");
    const std::string exp = dir + "/cells";
    fs::create_directories(exp + "/runs");
    std::ofstream(exp + "/experiment.yaml")
        << "name: cells\ndata: {task: reverse, synthetic: {train_len: [1, 4], test_len: [5, 8]}}\n"
           "model: {family: encoder_only}\neval: {splits: [val, test], metrics: [accuracy]}\n"
           "sweep:\n  cells:\n    - {model.position: {type: rope}, train.lr: 0.25}\n"
           "    - {model.position: {type: rope, randomized: 64}, train.lr: 0.5}\n  seeds: [1, 2, 3]\n"
           "report:\n  rows: model.position\n  metrics: [test.accuracy]\n"
           "  contrasts: [[\"{type: rope, randomized: 64}\", \"{type: rope}\"]]\n";
    auto run = [&](const std::string& pos, const std::string& id_pos, const std::string& lr, int seed, double acc) {
        const std::string id = "position=" + id_pos + "_lr=" + lr + "_seed=" + std::to_string(seed);
        fs::create_directories(exp + "/runs/" + id);
        Json j = {{"id", id},
                  {"labels", {{"model.position", pos}, {"train.lr", lr}, {"seed", std::to_string(seed)}}},
                  {"metrics", {{"test.accuracy", acc}}}};
        std::ofstream(exp + "/runs/" + id + "/results.json") << j.dump();
    };
    const double base[] = {50, 51, 55}, rnd[] = {60, 64, 70};
    for (int seed = 1; seed <= 3; ++seed) {
        run("{type: rope}", "type-rope", "0.25", seed, base[seed - 1]);
        run("{type: rope, randomized: 64}", "type-rope-randomized-64", "0.5", seed, rnd[seed - 1]);
    }
    const ReportTables t = build_report(exp);
    CHECK(t.rows == std::vector<std::string>{"{type: rope}", "{type: rope, randomized: 64}"});
    const Stats d = t.contrast_paired.at({"{type: rope, randomized: 64}", "{type: rope}", "test.accuracy"});
    CHECK(d.n == 3);
    CHECK(d.mean == Approx((10.0 + 13.0 + 15.0) / 3));
    REQUIRE(t.family_t.size() == 1);
    CHECK(t.family_t[0].p_holm == Approx(t.family_t[0].p));  // a family of one
    CHECK(t.family_t[0].p == Approx(two_sided_p_df2(paired_t({10, 13, 15}))).epsilon(1e-10));
    CHECK(t.family_t[0].p < 0.05);
    // A second run of a row and seed (its encoding at the other rate) would make the pairing ambiguous: refused.
    run("{type: rope}", "type-rope", "0.5", 1, 99);
    std::string err;
    try {
        build_report(exp);
    } catch (const std::exception& e) {
        err = e.what();
    }
    CHECK_THAT(err, Catch::Contains("report: row '{type: rope}' has two runs of seed 1 (") &&
                        Catch::Contains("so its paired comparisons are ambiguous"));
    fs::remove_all(dir);
}

TEST_CASE("report/verdicts: test splits with 3 or more paired seeds, Holm over them, p(Holm) beside each interval", "[report]") {
    // Rows none (the baseline), rope, sinusoidal with seeds 1-3 and alibi with seeds 1-2; test and val accuracy.
    // rope - none on test: differences 10, 13, 18 (t = 5.9, 2 df: p = 0.028, its interval excludes 0);
    // sinusoidal - none: -1, 1, 1 (t = 0.5, p = 2/3). A family of these two: Holm gives rope 2p = 0.056 and
    // sinusoidal max(2p_rope, 2/3) = 2/3. alibi (2 seeds), the contrast rope - alibi (2 seeds) and every val
    // comparison carry no verdict and are not counted in m. The sweep has 12 runs, 11 finished, and the config
    // states 4 comparisons on the test split: while it trains, rope's Holm p over the 4 lies between p and 4p =
    // 0.112, so it waits for the family; sinusoidal's p >= 0.05 is not shown whatever comes. With alibi's third
    // seed the study is complete, the family is the 4, and rope is "not shown" though its interval excludes 0.
    const std::string dir = fresh_dir("report_verdicts");
    const std::string exp = dir + "/verdicts";
    fs::create_directories(exp + "/runs");
    std::ofstream(exp + "/experiment.yaml")
        << "name: verdicts\ndata: {task: reverse, synthetic: {train_len: [1, 4], test_len: [5, 8]}}\n"
           "model: {family: encoder_only}\neval: {splits: [val, test], metrics: [accuracy]}\n"
           "sweep:\n  grid:\n    model.position.type: [none, rope, sinusoidal, alibi]\n  seeds: [1, 2, 3]\n"
           "report:\n  rows: model.position.type\n  metrics: [test.accuracy, val.accuracy]\n  baseline: none\n"
           "  contrasts: [[rope, alibi]]\n";
    auto run = [&](const std::string& pos, int seed, double test, double val) {
        const std::string id = "type=" + pos + "_seed=" + std::to_string(seed);
        fs::create_directories(exp + "/runs/" + id);
        Json j = {{"id", id},
                  {"labels", {{"model.position.type", pos}, {"seed", std::to_string(seed)}}},
                  {"metrics", {{"test.accuracy", test}, {"val.accuracy", val}}}};
        std::ofstream(exp + "/runs/" + id + "/results.json") << j.dump();
    };
    const double none[] = {50, 52, 51}, rope[] = {60, 65, 69}, sin[] = {49, 53, 52};
    const double none_val[] = {61, 62, 63}, rope_val[] = {72, 75, 77};  // val: rope - none = 11, 13, 14 (t = 14.4)
    for (int seed = 1; seed <= 3; ++seed) {
        run("none", seed, none[seed - 1], none_val[seed - 1]);
        run("rope", seed, rope[seed - 1], rope_val[seed - 1]);
        run("sinusoidal", seed, sin[seed - 1], 60);
    }
    run("alibi", 1, 55, 65);
    run("alibi", 2, 54, 66);
    const ReportTables t = build_report(exp);
    REQUIRE(t.family_t.size() == 2);
    const auto& r = t.family_t[0];
    const auto& s = t.family_t[1];
    CHECK((r.a == "rope" && r.b == "none" && r.metric == "test.accuracy" && r.n == 3));
    CHECK((s.a == "sinusoidal" && s.b == "none" && s.metric == "test.accuracy"));
    const double p_rope = two_sided_p_df2(paired_t({10, 13, 18})), p_sin = two_sided_p_df2(paired_t({-1, 1, 1}));
    CHECK(p_sin == Approx(2.0 / 3.0));  // t = 0.5: 1 - 0.5/1.5
    CHECK(r.p == Approx(p_rope).epsilon(1e-10));
    CHECK(s.p == Approx(p_sin).epsilon(1e-10));
    CHECK(r.p < 0.05);                                   // unadjusted, it would pass,
    CHECK(r.ci_low > 0);                                 // and its interval excludes 0,
    CHECK(r.p_holm == Approx(2 * p_rope).epsilon(1e-10));  // but after Holm over m = 2
    CHECK(r.p_holm >= 0.05);
    CHECK(t.sweep_finished == 11);
    CHECK(t.stated_tests == 4);
    CHECK(r.p_bound == Approx(4 * p_rope).epsilon(1e-10));
    CHECK(std::string(verdict_word(r)) == "waits for the family");
    CHECK(s.p_bound == 1.0);
    CHECK(std::string(verdict_word(s)) == "not shown");
    CHECK(s.p_holm == Approx(std::max(2 * p_rope, p_sin)).epsilon(1e-10));
    // everything else is described without a verdict, with the reason
    std::map<std::string, std::string> why;
    for (const auto& c : t.no_verdict_t) why[c.a + "-" + c.b + " " + c.metric] = c.no_verdict;
    CHECK(why == std::map<std::string, std::string>{{"rope-none val.accuracy", "validation split"},
                                                    {"sinusoidal-none val.accuracy", "validation split"},
                                                    {"alibi-none test.accuracy", "too few seeds"},
                                                    {"alibi-none val.accuracy", "validation split"},
                                                    {"rope-alibi test.accuracy", "too few seeds"},
                                                    {"rope-alibi val.accuracy", "validation split"}});
    const std::string md = render_markdown(t);
    const double half = std::sqrt(2 / (0.05 * 1.95) - 2) * std::sqrt(((10 - 41.0 / 3) * (10 - 41.0 / 3) + (13 - 41.0 / 3) * (13 - 41.0 / 3) +
                                                                      (18 - 41.0 / 3) * (18 - 41.0 / 3)) / 2) / std::sqrt(3.0);
    const std::string rope_line = fmt::format("+13.67 [{:+.2f}, {:+.2f}] n=3 t={:.1f} — p(Holm) between {:.3f} and {:.3f} over the "
                                              "stated family, waits for the family", 41.0 / 3 - half, 41.0 / 3 + half,
                                              paired_t({10, 13, 18}), p_rope, 4 * p_rope);
    CHECK_THAT(md, Catch::Contains("| rope | " ) && Catch::Contains(rope_line));
    CHECK_THAT(md, Catch::Contains("| 54.50 ± 0.71 (n=2) |") && Catch::Contains("— too few seeds: no verdict") &&
                       Catch::Contains(fmt::format("n=3 t={:.1f} — validation split: no verdict", paired_t({11, 13, 14}))));
    CHECK_THAT(md, Catch::Contains("Paired t-test over seeds (two-sided), the comparisons above on test splits with n >= 3 and a "
                                   "spread: 2 of the 4 comparisons the config states on test splits are tested so far") &&
                       Catch::Contains(fmt::format("| {:.3f} | {:.3f} (bound {:.3f}) | waits for the family |", p_rope, 2 * p_rope,
                                                   4 * p_rope)) &&
                       Catch::Contains(fmt::format("— p = {:.3f} before any adjustment, not shown", p_sin)) &&
                       Catch::Contains("Paired t-test over seeds, no verdict (not in the family): 6 comparisons."));
    for (const char* gone : {"†", "not visible", "unresolved"}) CHECK(md.find(gone) == std::string::npos);
    const Json doc = Json::parse(render_json(t));
    REQUIRE(doc["family_t"].size() == 2);
    CHECK(doc["family_t"][0]["verdict"] == "waits for the family");
    CHECK(doc["family_t"][0]["holds"] == false);
    CHECK(doc["family_t"][0]["p_bound"] == Approx(4 * p_rope).margin(1e-6));
    CHECK(doc["family_t"][1]["verdict"] == "not shown");
    CHECK(doc["verdict_rule"]["stated_tests"] == 4);
    CHECK(doc["family_t"][0]["p_holm"] == Approx(2 * p_rope).margin(1e-6));
    CHECK(doc["family_t"][0]["ci_low"] == Approx(41.0 / 3 - half).margin(1e-6));
    CHECK(doc["no_verdict_t"].size() == 6);
    const Json contrast = doc["contrasts"][0];  // rope - alibi on test.accuracy
    CHECK(contrast["no_verdict"] == "too few seeds");
    CHECK(contrast["verdict"].is_null());
    for (const auto& c : doc["cells"])
        if (c["row"] == "rope" && c.contains("delta_vs_baseline")) {
            if (c["metric"] == "test.accuracy") {
                CHECK(c["delta_vs_baseline"]["verdict"] == "waits for the family");
                CHECK(c["delta_vs_baseline"]["p_holm"] == Approx(2 * p_rope).margin(1e-6));
            } else {
                CHECK(c["delta_vs_baseline"]["no_verdict"] == "validation split");
            }
        }
    // the same runs with the study stopped short of its grid (sweep.only, docs/studies.md): the points that ran, so
    // it is complete, no bound, and the family of the 2 tested is read as final
    {
        const std::string yaml = [&] {
            std::ifstream in(exp + "/experiment.yaml");
            return std::string(std::istreambuf_iterator<char>(in), {});
        }();
        std::string only = yaml;
        const std::string seeds = "  seeds: [1, 2, 3]\n";
        REQUIRE(only.find(seeds) != std::string::npos);
        only.replace(only.find(seeds), seeds.size(),
                     seeds + "  only: ['type=none_*', 'type=rope_*', 'type=sinusoidal_*', 'type=alibi_seed=1', 'type=alibi_seed=2']\n");
        std::ofstream(exp + "/experiment.yaml") << only;
        const ReportTables c = build_report(exp);
        CHECK(c.sweep_points == 11);
        CHECK(c.sweep_finished == 11);
        REQUIRE(c.family_t.size() == 2);
        CHECK(std::isnan(c.family_t[0].p_bound));
        CHECK(std::string(verdict_word(c.family_t[0])) == "not shown");  // Holm over the 2: 2p = 0.056
        CHECK_THAT(render_markdown(c), !Catch::Contains("of the sweep's") && Catch::Contains("a family of 2 comparisons (m = 2)"));
        std::ofstream(exp + "/experiment.yaml") << yaml;
    }
    // alibi's third seed: alibi - none 5, 2, 2 and rope - alibi 5, 11, 16 join the family, the study is complete
    run("alibi", 3, 53, 66);
    const ReportTables w = build_report(exp);
    CHECK(w.sweep_finished == 12);
    REQUIRE(w.family_t.size() == 4);
    std::vector<double> ps;
    for (const auto& c : w.family_t) ps.push_back(c.p);
    const auto adj = holm_adjust(ps);
    for (std::size_t i = 0; i < w.family_t.size(); ++i) {
        const auto& c = w.family_t[i];
        CHECK(std::isnan(c.p_bound));
        CHECK(c.p_holm == Approx(adj[i]).epsilon(1e-12));
        CHECK(std::string(verdict_word(c)) == (c.p_holm < 0.05 ? "holds" : "not shown"));
    }
    CHECK(w.family_t[0].p_holm == Approx(4 * p_rope).epsilon(1e-10));  // rope has the smallest p of the 4
    CHECK(w.family_t[0].ci_low > 0);
    CHECK(std::string(verdict_word(w.family_t[0])) == "not shown");     // though its interval excludes 0
    const std::string wmd = render_markdown(w);
    CHECK_THAT(wmd, Catch::Contains("a family of 4 comparisons (m = 4); 0 of them hold") &&
                        Catch::Contains(fmt::format("— p(Holm) = {:.3f}, not shown", 4 * p_rope)) &&
                        !Catch::Contains("stated family") && !Catch::Contains("(bound"));
    CHECK(Json::parse(render_json(w))["family_t"][0]["p_bound"].is_null());
    fs::remove_all(dir);
}

TEST_CASE("report/renders_tables_from_fixture_runs", "[report]") {
    const std::string dir = fresh_dir("report");
    fs::copy(std::string(RELPOS_SOURCE_DIR) + "/tests/fixtures/runs", dir, fs::copy_options::recursive);
    ReportTables t = build_report(dir + "/fixture_k");
    CHECK(t.runs == 4);
    REQUIRE(t.rows == std::vector<std::string>{"0", "16"});
    const Stats s16 = t.cells.at({"16", "", "test2016.bleu_tok"});
    CHECK(s16.n == 3);
    CHECK(s16.mean == Approx(31.0));
    CHECK(s16.std == Approx(1.0));  // 30, 31, 32: sample sd 1
    const Stats s0 = t.cells.at({"0", "", "test2016.bleu_tok"});
    CHECK(s0.n == 1);
    const std::string md = render_markdown(t);
    CHECK_THAT(md, Catch::Contains("31.00 ± 1.00 (n=3)") && Catch::Contains("25.8") && Catch::Contains("12.5"));
    CHECK_THAT(render_csv(t), Catch::Contains("16,,test2016.bleu_tok,31.0000,1.0000,3,25.8"));
    CHECK_THAT(render_json(t), Catch::Contains("\"mean\": 31.0,"));
    // every run's own numbers, seeds as columns (k = 0 has seed 1 only)
    REQUIRE(t.seeds == std::vector<std::string>{"1", "2", "3"});
    CHECK(t.per_seed.at({"16", "2", "test2016.bleu_tok"}) == Approx(31.0));
    CHECK_THAT(md, Catch::Contains("| model.position.k | seed 1 | seed 2 | seed 3 |") &&
                       Catch::Contains("| 0 | 10.00 / 11.00 | – | – |") &&
                       Catch::Contains("Each finished run: test2016.bleu_tok / val.bleu_tok."));
    fs::remove_all(dir);
}

TEST_CASE("report/baseline_differences_are_paired_by_seed", "[report]") {
    const std::string dir = fresh_dir("report_baseline");
    fs::copy(std::string(RELPOS_SOURCE_DIR) + "/tests/fixtures/runs", dir, fs::copy_options::recursive);
    std::ofstream(dir + "/fixture_k/experiment.yaml", std::ios::app) << "  baseline: \"16\"\n";
    ReportTables t = build_report(dir + "/fixture_k");
    REQUIRE(t.baseline == "16");
    // k = 0 has seed 1 only (10.0); k = 16 seed 1 is 30.0: one pair, -20
    const Stats d0 = t.paired.at({"0", "test2016.bleu_tok"});
    CHECK(d0.n == 1);
    CHECK(d0.mean == Approx(-20.0));
    const Stats d16 = t.paired.at({"16", "test2016.bleu_tok"});
    CHECK(d16.n == 3);
    CHECK(d16.mean == Approx(0.0));
    const std::string md = render_markdown(t);
    CHECK_THAT(md, Catch::Contains("Δ test2016.bleu_tok vs 16 (same seed, 95% CI)") && Catch::Contains("-20.00 (n=1)") &&
                       Catch::Contains("(baseline)"));
    CHECK_THAT(render_csv(t), Catch::Contains("0,,test2016.bleu_tok,10.0000,,1,12.5,-20.0000,,1"));
    const std::string json = render_json(t);
    const Json cells = Json::parse(json)["cells"];
    const auto k0 = std::find_if(cells.begin(), cells.end(), [](const Json& c) {
        return c["row"] == "0" && c["metric"] == "test2016.bleu_tok";
    });
    REQUIRE(k0 != cells.end());
    // one seed: no interval, and no verdict (too few seeds)
    CHECK((*k0)["delta_vs_baseline"] == Json{{"baseline", "16"}, {"mean", -20.0}, {"std", nullptr}, {"n", 1}, {"ci_low", nullptr},
                                             {"ci_high", nullptr}, {"verdict", nullptr}, {"no_verdict", "too few seeds"}});
    // a second k = 0 seed: differences -20 and -19, sd 0.71, t = -19.5 / (0.71 / sqrt 2) = -39, beyond
    // the 5% critical value for 1 degree of freedom (12.706); the 95% interval is
    // -19.5 ± 12.706 * 0.5 = [-25.85, -13.15]
    const std::string k0s2 = dir + "/fixture_k/runs/k=0_seed=2";
    fs::create_directories(k0s2);
    std::ofstream(k0s2 + "/results.json") << "{\"id\": \"k=0_seed=2\", \"labels\": {\"model.position.k\": \"0\", \"seed\": \"2\"}, "
                                             "\"metrics\": {\"test2016.bleu_tok\": 12.0, \"val.bleu_tok\": 13.0}}\n";
    const ReportTables t2 = build_report(dir + "/fixture_k");
    // Two seeds are too few for a verdict: the interval is shown, with why there is no verdict, and the
    // comparison is not a member of the Holm family; neither is val, whatever its seeds.
    CHECK_THAT(render_markdown(t2), Catch::Contains("| -19.50 [-25.85, -13.15] n=2 t=-39.0 — too few seeds: no verdict |"));
    CHECK(render_markdown(t2).find("†") == std::string::npos);  // no unadjusted mark of significance
    CHECK(t2.family_t.empty());
    REQUIRE(t2.no_verdict_t.size() == 2);
    CHECK(t2.no_verdict_t[0].metric == "test2016.bleu_tok");
    CHECK(t2.no_verdict_t[0].no_verdict == "too few seeds");
    CHECK(t2.no_verdict_t[1].metric == "val.bleu_tok");
    CHECK(t2.no_verdict_t[1].no_verdict == "validation split");
    CHECK(t2.no_verdict_t[0].ci_low == Approx(-19.5 - 12.706204736174707 * 0.5).epsilon(1e-12));  // t_{0.975,1} = tan(0.475 π)
    {
        const Json cells2 = Json::parse(render_json(t2))["cells"];
        const auto k0b = std::find_if(cells2.begin(), cells2.end(), [](const Json& c) {
            return c["row"] == "0" && c["metric"] == "test2016.bleu_tok";
        });
        REQUIRE(k0b != cells2.end());
        CHECK((*k0b)["delta_vs_baseline"]["verdict"].is_null());
        CHECK((*k0b)["delta_vs_baseline"]["no_verdict"] == "too few seeds");
        CHECK_FALSE((*k0b)["delta_vs_baseline"].contains("p_holm"));
    }
    // A third k = 0 seed (test 11, val 12): test differences -20, -19, -21 (sd 1, t = -20·√3 = -34.6, 2 df),
    // a family of one (val stays out); its p by the closed form of 2 df, its interval by t_{0.975,2} =
    // √(2/(0.05·1.95) - 2).
    const std::string k0s3 = dir + "/fixture_k/runs/k=0_seed=3";
    fs::create_directories(k0s3);
    std::ofstream(k0s3 + "/results.json") << "{\"id\": \"k=0_seed=3\", \"labels\": {\"model.position.k\": \"0\", \"seed\": \"3\"}, "
                                             "\"metrics\": {\"test2016.bleu_tok\": 11.0, \"val.bleu_tok\": 12.0}}\n";
    const ReportTables t4 = build_report(dir + "/fixture_k");
    REQUIRE(t4.family_t.size() == 1);
    const auto& k0t = t4.family_t[0];
    CHECK(k0t.a == "0");
    CHECK(k0t.metric == "test2016.bleu_tok");
    CHECK(k0t.n == 3);
    CHECK(k0t.p == Approx(two_sided_p_df2(paired_t({-20, -19, -21}))).epsilon(1e-10));
    CHECK(k0t.p_holm == Approx(k0t.p));  // a family of one
    const double t975_2 = std::sqrt(2 / (0.05 * 1.95) - 2), half = t975_2 / std::sqrt(3.0);
    CHECK(k0t.ci_low == Approx(-20 - half).epsilon(1e-12));
    CHECK(k0t.ci_high == Approx(-20 + half).epsilon(1e-12));
    REQUIRE(t4.no_verdict_t.size() == 1);
    CHECK(t4.no_verdict_t[0].metric == "val.bleu_tok");
    const std::string md4 = render_markdown(t4);
    // p(Holm) beside the interval, in the table of differences and in the family's table
    CHECK_THAT(md4, Catch::Contains(fmt::format("| -20.00 [{:+.2f}, {:+.2f}] n=3 t=-34.6 — p(Holm) = {:.1e}, holds |",
                                                -20 - half, -20 + half, k0t.p)));
    CHECK_THAT(md4, Catch::Contains("### Multiplicity (Holm)") &&
                        Catch::Contains(fmt::format("| 0 − 16 | test2016.bleu_tok | 3 | -20.00 [{:+.2f}, {:+.2f}] | {:.1e} | {:.1e} | holds |",
                                                    -20 - half, -20 + half, k0t.p, k0t.p)) &&
                        Catch::Contains("| 0 − 16 | val.bleu_tok | 3 | -22.00 [") && Catch::Contains("| validation split |") &&
                        Catch::Contains("The interval is the unadjusted 95% one; the verdict reads p(Holm)"));
    // and what the family's size asks of a 3-seed comparison: p < 0.05 / m, the |t| that gives it with 2 df
    CHECK_THAT(md4, Catch::Contains(fmt::format("The first comparison to hold needs p < 0.05/1 = 0.05: |t| > {:.1f} with 3 seeds (2 df)",
                                                t975_2)));
    // A contrast that repeats a baseline comparison (0 - 16 with baseline 16) is the same test: counted once.
    std::ofstream(dir + "/fixture_k/experiment.yaml", std::ios::app) << "  contrasts: [[\"0\", \"16\"]]\n";
    const ReportTables t3 = build_report(dir + "/fixture_k");
    CHECK(t3.family_t.size() == t4.family_t.size());
    CHECK(t3.no_verdict_t.size() == t4.no_verdict_t.size());
    const Json doc = Json::parse(render_json(t4));
    const Json fam = doc["family_t"];
    REQUIRE(fam.size() == 1);
    CHECK(fam[0]["row"] == "0");
    CHECK(fam[0]["holds"] == true);
    CHECK(fam[0]["verdict"] == "holds");
    CHECK(fam[0]["p_holm"] == Approx(k0t.p).margin(1e-6));
    CHECK(fam[0]["ci_low"] == Approx(-20 - half).margin(1e-6));
    REQUIRE(doc["no_verdict_t"].size() == 1);
    CHECK(doc["no_verdict_t"][0]["metric"] == "val.bleu_tok");
    CHECK(doc["no_verdict_t"][0]["no_verdict"] == "validation split");
    CHECK(doc["no_verdict_t"][0]["verdict"].is_null());
    CHECK_FALSE(doc["no_verdict_t"][0].contains("p_holm"));
    CHECK(doc["verdict_rule"]["min_seeds"] == 3);
    fs::remove_all(dir);
}

TEST_CASE("report/contrasts_compare_two_rows_paired_by_seed_and_by_bootstrap", "[report]") {
    // Three rows on the real test2016 references (hand-made hypotheses): k = 16 copies the references,
    // k = 4 drops the last word of every other sentence, k = 0 of every sentence. The baseline is 16 and
    // the contrast asks 4 - 0, which no baseline column shows: paired by seed (60 - 40, 61 - 42) and by a
    // bootstrap over the sentences (4 is the better system: observed BLEU difference > 0, p < 0.05).
    const std::string dir = fresh_dir("report_contrasts");
    const std::string exp = dir + "/contrasts";
    fs::create_directories(exp + "/runs");
    const std::string data = std::string(RELPOS_SOURCE_DIR) + "/data/multi30k";
    std::ofstream(exp + "/experiment.yaml")
        << "name: contrasts\ndata: {task: multi30k, dir: " << data << ", src: de, tgt: en, tokenized: true, "
        << "test_splits: [test2016]}\nmodel: {position: {type: shaw, k: 16}}\n"
           "eval: {splits: [val, test2016], metrics: [bleu_tok]}\nsweep:\n  grid:\n    model.position.k: [0, 4, 16]\n"
           "  seeds: [1, 2]\nreport:\n  rows: model.position.k\n  metrics: [test2016.bleu_tok]\n  baseline: \"16\"\n"
           "  bootstrap: 200\n  contrasts: [[\"4\", \"0\"], [\"0\", \"4\"]]\n";
    const auto refs = read_lines(multi30k_path(data, "test2016", "en", true));
    REQUIRE(refs.size() > 900);
    auto run = [&](const std::string& k, int seed, double bleu, std::size_t every) {
        const std::string id = "k=" + k + "_seed=" + std::to_string(seed);
        fs::create_directories(exp + "/runs/" + id);
        std::ofstream(exp + "/runs/" + id + "/results.json")
            << "{\"id\": \"" << id << "\", \"labels\": {\"model.position.k\": \"" << k << "\", \"seed\": \"" << seed
            << "\"}, \"metrics\": {\"test2016.bleu_tok\": " << bleu << "}}\n";
        std::ofstream hyp(exp + "/runs/" + id + "/hyp.test2016.txt");
        for (std::size_t i = 0; i < refs.size(); ++i) {
            std::string h = refs[i];
            if (every && i % every == 0 && h.rfind(' ') != std::string::npos) h = h.substr(0, h.rfind(' '));
            hyp << h << "\n";
        }
    };
    for (int seed : {1, 2}) {
        run("16", seed, 100, 0);
        run("4", seed, seed == 1 ? 60 : 61, 2);
        run("0", seed, seed == 1 ? 40 : 42, 1);
    }
    const ReportTables t = build_report(exp);
    REQUIRE(t.contrasts.size() == 2);
    const Stats d = t.contrast_paired.at({"4", "0", "test2016.bleu_tok"});
    CHECK(d.n == 2);
    CHECK(d.mean == Approx(19.5));  // (60 - 40 + 61 - 42) / 2
    CHECK(t.contrast_paired.at({"0", "4", "test2016.bleu_tok"}).mean == Approx(-19.5));
    const auto& b = t.contrast_bootstrap.at({"4", "0", "test2016.bleu_tok"});
    CHECK(b.seeds == 2);
    CHECK(b.resamples == 200);
    CHECK(b.observed > 0);
    CHECK(b.p_value < 0.05);
    CHECK(b.ci_low > 0);
    CHECK(t.contrast_bootstrap.at({"0", "4", "test2016.bleu_tok"}).observed == Approx(-b.observed));
    // the baseline's bootstrap is the same computation with the baseline as the second row
    CHECK(t.bootstrap.at({"4", "test2016.bleu_tok"}).observed < 0);
    const std::string md = render_markdown(t);
    CHECK_THAT(md, Catch::Contains("### Contrasts between rows") && Catch::Contains("| 4 − 0 | +19.50 [") &&
                       Catch::Contains("| 0 − 4 | -19.50 ["));
    const Json json = Json::parse(render_json(t));
    REQUIRE(json["contrasts"].size() == 2);
    CHECK(json["contrasts"][0]["row"] == "4");
    CHECK(json["contrasts"][0]["minus"] == "0");
    CHECK(json["contrasts"][0]["mean"] == Approx(19.5));
    CHECK(json["contrasts"][0]["bootstrap"]["seeds"] == 2);
    fs::remove_all(dir);
}

TEST_CASE("report/learning_curves_average_seeds_per_row", "[report]") {
    // One curve per row: the mean validation loss over the row's seeds that reached each step, with the
    // band from the lowest to the highest (k = 16 at step 10: (4 + 5 + 6) / 3; seed 3 stopped there).
    const std::string dir = fresh_dir("report_curves");
    fs::copy(std::string(RELPOS_SOURCE_DIR) + "/tests/fixtures/runs", dir, fs::copy_options::recursive);
    ReportTables t = build_report(dir + "/fixture_k");
    std::string note;
    render_plots(dir + "/fixture_k", t, &note);
    if (!note.empty()) {
        WARN(note);
        return;
    }
    const auto read = [&](const std::string& name) {
        std::ifstream in(dir + "/fixture_k/plots/" + name);
        return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    };
    // step, mean, lowest, highest, seeds at that step
    CHECK(read("curve_0.dat") == "10 7 7 7 1\n");           // k = 0, one seed
    CHECK(read("curve_1.dat") == "10 5 4 6 3\n20 2.5 2 3 2\n");  // k = 16: three seeds, then the two that went on
    CHECK(read("stops_1.dat") == "20 3\n20 2\n10 6\n");          // where each k = 16 run stopped
    CHECK(read("k=16_seed=2.valid.dat") == "10 5\n20 2\n");
    const std::string gp = read("learning_curves.gp");
    CHECK_THAT(gp, Catch::Contains("title 'k=0 (n=1)'") && Catch::Contains("title 'k=16 (n=3)'"));
    CHECK_THAT(gp, Catch::Contains("lc rgb '#0072B2'") && Catch::Contains("lc rgb '#D55E00'"));  // one colour per row
    // a title with a quote is escaped for gnuplot (it used to end the string and break the script),
    // and the explanation goes on a second line of the title
    fs::remove_all(dir + "/fixture_k/plots");
    t.title = "Shaw's clipping";
    t.plots = {"learning_curves", "metric_vs_row"};
    render_plots(dir + "/fixture_k", t, &note);
    CHECK_THAT(read("learning_curves.gp"),
               Catch::Contains("title 'Shaw''s clipping' . \"\\n\" . 'mean over seeds, band = lowest to highest seed"));
    CHECK_THAT(read("metric_vs_row.gp"), Catch::Contains("set title 'Shaw''s clipping'"));
    CHECK(fs::file_size(dir + "/fixture_k/plots/learning_curves.png") > 0);
    CHECK(fs::file_size(dir + "/fixture_k/plots/metric_vs_row.png") > 0);
    // the paper's series has every row it has a value for, finished here or not
    t.reference["64"] = 25.9;
    render_plots(dir + "/fixture_k", t, &note);
    CHECK(read("metric_vs_row.paper.dat") == "0 12.5\n16 25.8\n");  // rows are the table's: 64 is not one
    // report.json carries the published column whole, so a README's citation of it can be checked
    const Json ref = Json::parse(render_json(t))["reference"];
    CHECK(ref["title"] == "paper");
    CHECK(ref["values"]["0"].get<double>() == Approx(12.5));
    CHECK(ref["values"]["64"].get<double>() == Approx(25.9));
    t.rows.push_back("64");
    t.cells[{"64", "", "test2016.bleu_tok"}] = Stats{};
    render_plots(dir + "/fixture_k", t, &note);
    CHECK(read("metric_vs_row.paper.dat") == "0 12.5\n16 25.8\n64 25.9\n");
    CHECK(read("metric_vs_row.dat") == "0 10 0\n16 31 1\n");
    // report.plots picks the plots: only BLEU vs k here, and what the last report drew beside it is gone
    // (its data, scripts, images), while a file relpos did not write stays
    REQUIRE(fs::exists(dir + "/fixture_k/plots/learning_curves.gp"));
    { std::ofstream(dir + "/fixture_k/plots/notes.txt") << "mine\n"; }
    t.plots = {"metric_vs_row"};
    render_plots(dir + "/fixture_k", t, &note);
    CHECK(fs::exists(dir + "/fixture_k/plots/metric_vs_row.gp"));
    CHECK_FALSE(fs::exists(dir + "/fixture_k/plots/learning_curves.gp"));
    CHECK_FALSE(fs::exists(dir + "/fixture_k/plots/learning_curves.png"));
    CHECK_FALSE(fs::exists(dir + "/fixture_k/plots/k=0_seed=1.attention.gp"));
    CHECK(fs::exists(dir + "/fixture_k/plots/notes.txt"));
    fs::remove_all(dir);
}

TEST_CASE("report/the loss-by-position plot marks the training length, unless the sweep varies it", "[report]") {
    // A language model trained at 16 tokens, its loss by position in windows of 64 (loss_pos64@p): the plot
    // is titled as such and has a dashed line at 16; with data.lm.context swept there is no one length.
    const std::string dir = fresh_dir("report_by_position");
    auto experiment = [&](const std::string& name, const std::string& grid) {
        const std::string exp = dir + "/" + name;
        fs::create_directories(exp + "/runs/type=alibi_seed=1");
        std::ofstream(exp + "/experiment.yaml")
            << "name: " << name << "\ndata: {task: brown, lm: {context: 16, eval_lengths: [16, 64]}}\n"
               "model: {family: decoder_only, position: {type: alibi}}\n"
               "eval: {splits: [val, test], metrics: [ppl, loss_by_position], split_metrics: {val: [ppl]}}\n"
               "sweep:\n  grid:\n    model.position.type: [alibi]\n" << grid
            << "report:\n  rows: model.position.type\n  metrics: [test.ppl@16, test.loss_pos64@48]\n  plots: [metric_vs_length]\n";
        std::ofstream(exp + "/runs/type=alibi_seed=1/results.json")
            << "{\"id\": \"type=alibi_seed=1\", \"labels\": {\"model.position.type\": \"alibi\", \"seed\": \"1\"}, "
               "\"metrics\": {\"test.ppl@16\": 90, \"test.loss_pos64@0\": 5.1, \"test.loss_pos64@16\": 4.6, "
               "\"test.loss_pos64@32\": 4.5, \"test.loss_pos64@48\": 4.4}}\n";
        ReportTables t = build_report(exp);
        std::string note;
        render_plots(exp, t, &note);
        std::ifstream in(exp + "/plots/metric_vs_length.test.loss_pos64.gp");
        return std::make_tuple(t.train_context, note, std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()));
    };
    const auto [context, note, gp] = experiment("one_context", "");
    CHECK(context == 16);
    if (!note.empty()) {  // no gnuplot: no plots
        WARN(note);
        fs::remove_all(dir);
        return;
    }
    CHECK_THAT(gp, Catch::Contains("set title 'test: loss by position in windows of 64 tokens'") &&
                       Catch::Contains("set arrow from 16, graph 0 to 16, graph 1") &&
                       Catch::Contains("past the training length (16)") &&
                       Catch::Contains("position in the window") &&
                       Catch::Contains("set xrange [0:64]"));  // the window's positions, not a rounded-up axis
    const auto [swept, note2, gp2] = experiment("swept_context", "    data.lm.context: [16]\n");
    CHECK(swept == 0);
    CHECK_THAT(gp2, Catch::Contains("loss by position") && !Catch::Contains("set arrow"));
    fs::remove_all(dir);
}

TEST_CASE("report/paired differences by position: the contrasts, or each row minus the baseline, along the window", "[report]") {
    // Two rows (alibi, rope), seeds 1-2 in both and seed 3 in rope only, loss by position in windows of 64:
    // rope minus alibi at each position, paired by seed (seed 3 has no partner), mean with a 95% band.
    const std::string dir = fresh_dir("report_position_paired");
    auto experiment = [&](const std::string& name, const std::string& report) {
        const std::string exp = dir + "/" + name;
        const std::map<std::string, std::vector<double>> loss = {
            {"alibi_1", {5.0, 4.6, 4.5, 4.4}}, {"alibi_2", {5.2, 4.8, 4.7, 4.6}},
            {"rope_1", {5.0, 4.9, 5.0, 5.2}},  {"rope_2", {5.2, 5.0, 5.3, 5.4}}, {"rope_3", {9, 9, 9, 9}}};
        for (const auto& [run, v] : loss) {
            const std::string type = run.substr(0, run.find('_')), seed = run.substr(run.find('_') + 1);
            const std::string id = "type=" + type + "_seed=" + seed;
            fs::create_directories(exp + "/runs/" + id);
            std::ofstream(exp + "/runs/" + id + "/results.json")
                << "{\"id\": \"" << id << "\", \"labels\": {\"model.position.type\": \"" << type << "\", \"seed\": \"" << seed
                << "\"}, \"metrics\": {\"test.ppl@16\": 90, \"test.loss_pos64@0\": " << v[0] << ", \"test.loss_pos64@16\": "
                << v[1] << ", \"test.loss_pos64@32\": " << v[2] << ", \"test.loss_pos64@48\": " << v[3] << "}}\n";
        }
        std::ofstream(exp + "/experiment.yaml")
            << "name: " << name << "\ndata: {task: brown, lm: {context: 16, eval_lengths: [16, 64]}}\n"
               "model: {family: decoder_only, position: {type: alibi}}\n"
               "eval: {splits: [val, test], metrics: [ppl, loss_by_position], split_metrics: {val: [ppl]}}\n"
               "sweep:\n  grid:\n    model.position.type: [alibi, rope]\n  seeds: [1, 2, 3]\n"
               "report:\n  rows: model.position.type\n  metrics: [test.ppl@16, test.loss_pos64@48]\n  plots: [metric_vs_length]\n"
            << report;
        return build_report(exp);
    };
    for (const std::string report : {"  contrasts: [[rope, alibi]]\n", "  baseline: alibi\n"}) {
        const ReportTables t = experiment(report[2] == 'c' ? "contrast" : "baseline", report);
        REQUIRE(t.position_pairs == std::vector<std::pair<std::string, std::string>>{{"rope", "alibi"}});
        REQUIRE(t.position_paired.size() == 1);  // one pair, one family,
        const auto& along = t.position_paired.at({"rope", "alibi", "test.loss_pos64"});
        REQUIRE(along.size() == 4);              // four positions
        const Stats& at16 = along.at(16);
        CHECK(at16.n == 2);  // seed 3 has no alibi run
        CHECK(at16.mean == Approx(0.25));
        CHECK(at16.std == Approx(std::sqrt(0.005)));
        CHECK(along.at(48).mean == Approx(0.8));
        // report.json holds them for prose to cite: the pair's family by position, with the 95% interval
        const Json pp = Json::parse(render_json(t))["position_paired"];
        REQUIRE(pp.size() == 4);
        CHECK(pp[0]["position"] == 0);
        CHECK(pp[1]["position"] == 16);
        CHECK(pp[3]["position"] == 48);
        CHECK(pp[1]["row"] == "rope");
        CHECK(pp[1]["minus"] == "alibi");
        CHECK(pp[1]["metric"] == "test.loss_pos64");
        CHECK(pp[1]["n"] == 2);
        CHECK(pp[1]["mean"].get<double>() == Approx(0.25));
        CHECK(pp[1]["ci_high"].get<double>() - 0.25 == Approx(12.706 * std::sqrt(0.005) / std::sqrt(2.0)).epsilon(1e-3));
    }
    // the plot: one line per pair, its band the 95% interval (t(0.975, 1) = 12.706 for two seeds)
    const std::string exp = dir + "/contrast";
    const ReportTables t = build_report(exp);
    std::string note;
    render_plots(exp, t, &note);
    if (!note.empty()) {  // no gnuplot: no plots
        WARN(note);
        fs::remove_all(dir);
        return;
    }
    std::ifstream dat(exp + "/plots/metric_vs_length.test.loss_pos64.paired.0.dat");
    std::map<double, std::array<double, 3>> rows;
    for (double x, m, lo, hi; dat >> x >> m >> lo >> hi;) rows[x] = {m, lo, hi};
    REQUIRE(rows.size() == 4);
    CHECK(rows.at(16)[0] == Approx(0.25));
    CHECK(rows.at(16)[2] - rows.at(16)[0] == Approx(12.706 * std::sqrt(0.005) / std::sqrt(2.0)).epsilon(1e-3));
    CHECK(rows.at(48)[1] == Approx(0.8));  // no spread between the seeds: no band
    // at most ten significant digits (the interval at 16 has many): a rebuilt relpos moves the 16th digit, and a
    // regenerated report's files should not differ from the committed ones for that
    std::ifstream again(exp + "/plots/metric_vs_length.test.loss_pos64.paired.0.dat");
    std::size_t longest = 0;
    for (std::string word; again >> word;) {
        const std::string mantissa = word.substr(0, word.find_first_of("eE"));
        const auto first = mantissa.find_first_not_of("-+0.");
        std::size_t digits = 0;
        if (first != std::string::npos)
            for (char c : mantissa.substr(first)) digits += std::isdigit(static_cast<unsigned char>(c)) ? 1 : 0;
        longest = std::max(longest, digits);
    }
    CHECK(longest > 0);
    CHECK(longest <= 10);
    std::ifstream in(exp + "/plots/metric_vs_length.test.loss_pos64.paired.gp");
    const std::string gp((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CHECK_THAT(gp, Catch::Contains("paired differences") && Catch::Contains("rope − alibi (n=2)") &&
                       Catch::Contains("set xrange [0:64]") && Catch::Contains("past the training length (16)"));
    fs::remove_all(dir);
}

TEST_CASE("report/metric names at a length: split, metric, family and n, nothing for other names", "[report]") {
    const auto a = metric_names::at_length("test.loss_pos1024@64");
    REQUIRE(a);
    CHECK(a->split == "test");
    CHECK(a->metric == "loss_pos1024");
    CHECK(a->family == "test.loss_pos1024");
    CHECK(a->n == 64);
    CHECK(metric_names::loss_by_position_window(a->metric) == 1024);
    const auto b = metric_names::at_length("ppl@128");  // no split
    REQUIRE(b);
    CHECK(b->split.empty());
    CHECK(b->metric == "ppl");
    CHECK(b->family == "ppl");
    CHECK(b->n == 128);
    for (const char* name : {"test.bleu", "test.ppl@mean", "test.ppl@", "test.ppl@12x", "test.ppl"})
        CHECK_FALSE(metric_names::at_length(name));
}

TEST_CASE("report/compare sets the other experiment's rows beside with every metric, and dashed in the length plot", "[report]") {
    // A study trained short (rows rope, alibi; 2 seeds) and its reference trained long (rope only, 1 seed),
    // named by report.compare: the reference's row appears with every metric in its own table and in
    // report.json, and as a dashed line in the metric-vs-length plot; alibi has none.
    const std::string dir = fresh_dir("report_compare_rows");
    auto write = [&](const std::string& name, const std::vector<std::string>& types, int seeds, double shift,
                     const std::string& extra) {
        const std::string exp = dir + "/" + name;
        std::string grid;
        for (auto& ty : types) grid += (grid.empty() ? "" : ", ") + ty;
        fs::create_directories(exp + "/runs");
        std::ofstream(exp + "/experiment.yaml")
            << "name: " << name << "\ndata: {task: brown, lm: {context: 16, eval_lengths: [16, 64]}}\n"
               "model: {family: decoder_only, position: {type: alibi}}\n"
               "eval: {splits: [val, test], metrics: [ppl], split_metrics: {val: [ppl]}}\n"
               "sweep:\n  grid:\n    model.position.type: [" << grid << "]\n"
               "report:\n  rows: model.position.type\n  metrics: [test.ppl@16, test.ppl@64]\n  plots: [metric_vs_length]\n"
            << extra;
        for (auto& ty : types)
            for (int seed = 1; seed <= seeds; ++seed) {
                const std::string id = "type=" + ty + "_seed=" + std::to_string(seed);
                fs::create_directories(exp + "/runs/" + id);
                std::ofstream(exp + "/runs/" + id + "/results.json")
                    << "{\"id\": \"" << id << "\", \"labels\": {\"model.position.type\": \"" << ty << "\", \"seed\": \""
                    << seed << "\"}, \"metrics\": {\"test.ppl@16\": " << 90 + shift + seed << ", \"test.ppl@64\": "
                    << 150 + shift + seed << "}}\n";
            }
        return exp;
    };
    const std::string long_dir = write("long", {"rope"}, 1, -20, "");
    // the reference was also evaluated at a length the study was not: its line has that point too
    std::ofstream(long_dir + "/runs/type=rope_seed=1/results.json")
        << "{\"id\": \"type=rope_seed=1\", \"labels\": {\"model.position.type\": \"rope\", \"seed\": \"1\"}, "
           "\"metrics\": {\"test.ppl@16\": 71, \"test.ppl@64\": 131, \"test.ppl@256\": 140}}\n";
    const std::string exp = write("short", {"rope", "alibi"}, 2, 0,
                                  "  compare: {dir: " + long_dir + ", title: trained long}\n");
    ReportTables t = build_report(exp);
    CHECK(t.compare_length_cells.at({"rope", "test.ppl@64"}).mean == Approx(131));
    CHECK(t.compare_length_cells.count({"alibi", "test.ppl@64"}) == 0);
    const std::string md = render_markdown(t);
    CHECK_THAT(md, Catch::Contains("### trained long") && Catch::Contains("| rope | 71.00 (n=1) | 131.00 (n=1) |") &&
                       !Catch::Contains("| alibi | – | – |"));
    const Json j = Json::parse(render_json(t));
    REQUIRE(j.contains("compare"));
    CHECK(j["compare"]["cells"].size() == 2);
    CHECK(j["compare"]["cells"][1]["metric"] == "test.ppl@64");
    CHECK(j["compare"]["cells"][1]["mean"].get<double>() == Approx(131));
    CHECK_FALSE(Json::parse(render_json(build_report(long_dir))).contains("compare"));  // only with report.compare
    CHECK_FALSE(j.contains("reference"));  // only with report.reference
    // a reference with no finished run yet: no table (not an empty one)
    const std::string empty_dir = write("empty", {"rope"}, 0, 0, "");
    const std::string exp2 = write("short2", {"rope"}, 1, 0, "  compare: {dir: " + empty_dir + ", title: trained long}\n");
    CHECK_THAT(render_markdown(build_report(exp2)), !Catch::Contains("### trained long"));
    std::string note;
    render_plots(exp, t, &note);
    if (!note.empty()) {
        WARN(note);
        fs::remove_all(dir);
        return;
    }
    std::ifstream in(exp + "/plots/metric_vs_length.test.ppl.rope.compare.dat");
    CHECK(std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()) == "16 71\n64 131\n256 140\n");
    CHECK_FALSE(fs::exists(exp + "/plots/metric_vs_length.test.ppl.alibi.compare.dat"));
    std::ifstream gin(exp + "/plots/metric_vs_length.test.ppl.gp");
    CHECK_THAT(std::string((std::istreambuf_iterator<char>(gin)), std::istreambuf_iterator<char>()),
               Catch::Contains("dt 2") && Catch::Contains("title 'rope (trained long)'"));
    fs::remove_all(dir);
}

TEST_CASE("report/metric_vs_length draws every measured length, the training lengths from val too", "[report]") {
    // Runs that wrote val.accuracy@1..2 (training lengths) and test.accuracy@3..4, while the report lists
    // only test.accuracy@3: the plot's line has all four lengths (the test split's own where both exist).
    const std::string dir = fresh_dir("report_lengths");
    const std::string exp = dir + "/lengths";
    fs::create_directories(exp + "/runs");
    std::ofstream(exp + "/experiment.yaml")
        << "name: lengths\ndata: {task: copy, valid_split: val, test_splits: [test]}\n"
           "model: {family: decoder_only, position: {type: rope}}\n"
           "eval: {splits: [val, test], metrics: [accuracy]}\nsweep:\n  grid:\n    model.position.type: [rope, alibi]\n"
           "report:\n  rows: model.position.type\n  metrics: [test.accuracy, test.accuracy@3]\n  plots: [metric_vs_length]\n";
    auto run = [&](const std::string& type, int seed, double shift) {
        const std::string id = "type=" + type + "_seed=" + std::to_string(seed);
        fs::create_directories(exp + "/runs/" + id);
        std::ofstream(exp + "/runs/" + id + "/results.json")
            << "{\"id\": \"" << id << "\", \"labels\": {\"model.position.type\": \"" << type << "\", \"seed\": \""
            << seed << "\"}, \"metrics\": {\"val.accuracy@1\": " << 100 - shift << ", \"val.accuracy@2\": " << 90 - shift
            << ", \"test.accuracy@2\": 1.0, \"test.accuracy@3\": " << 50 - shift << ", \"test.accuracy@4\": " << 20 - shift
            << ", \"test.accuracy\": " << 35 - shift << "}}\n";
    };
    run("rope", 1, 0);
    run("rope", 2, 10);
    run("alibi", 1, 4);
    ReportTables t = build_report(exp);
    CHECK(t.length_cells.at({"rope", "", "val.accuracy@2"}).mean == Approx(85.0));
    CHECK(t.length_cells.at({"rope", "", "test.accuracy@4"}).n == 2);
    std::string note;
    render_plots(exp, t, &note);
    if (!note.empty()) {
        WARN(note);
        return;
    }
    std::ifstream in(exp + "/plots/metric_vs_length.test.accuracy.rope.dat");
    const std::string dat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    // n, mean, mean - sd, mean + sd (sd of 100, 90 is 7.07...): lengths 1, 2 from val, 3, 4 from test; at 2
    // the test split's own value (1.0) wins over val's
    CHECK_THAT(dat, Catch::StartsWith("1 95 ") && Catch::Contains("\n2 1 1 1\n") && Catch::Contains("\n3 45 ") &&
                        Catch::Contains("\n4 15 "));
    std::ifstream gin(exp + "/plots/metric_vs_length.test.accuracy.gp");
    const std::string gp((std::istreambuf_iterator<char>(gin)), std::istreambuf_iterator<char>());
    CHECK_THAT(gp, Catch::Contains("set yrange [-2:102]") && Catch::Contains("title 'rope'") &&
                       Catch::Contains("title 'alibi'") && !Catch::Contains("logscale x"));
    fs::remove_all(dir);
}

TEST_CASE("report/the provenance line names the runs by the machines that trained them, when they differ", "[report]") {
    const fs::path dir = experiment("machines",
                                    {{"reverse", "rope", 1, 90, -1}, {"reverse", "rope", 2, 91, -1},
                                     {"reverse", "alibi", 1, 92, -1}, {"reverse", "alibi", 2, 93, -1}},
                                    "model.position.type", "data.task");
    const std::string a = "CPU A, 2 cores, OpenBLAS kernels Cooperlake", b = "CPU A, 2 cores, OpenBLAS kernels Haswell";
    auto stamp = [&](const std::string& pos, int seed, const std::vector<std::string>& trained_on) {
        const fs::path f = dir / "runs" / fmt::format("task=reverse_type={}_seed={}", pos, seed) / "results.json";
        Json j;
        {
            std::ifstream in(f);
            j = Json::parse(in);
        }
        j["commit"] = "0123abcd";
        j["machine"] = trained_on.back();
        j["trained_on"] = trained_on;
        std::ofstream(f) << j.dump();
    };
    // every run on one machine: the line names it, and no breakdown
    for (const auto& pos : {"rope", "alibi"})
        for (int seed : {1, 2}) stamp(pos, seed, {a});
    ReportTables t = build_report(dir.string());
    CHECK(t.runs_by_machines.empty());
    CHECK_THAT(render_markdown(t), Catch::Contains("Machine: " + a + ". Last run finished"));
    CHECK_THAT(render_json(t), !Catch::Contains("runs_by_machines"));
    // one run resumed on other kernels, one trained on them only, one whose first stretch is not recorded
    stamp("rope", 2, {a, b});
    stamp("alibi", 1, {b});
    stamp("alibi", 2, {"not recorded (steps 1-40)", a});
    t = build_report(dir.string());
    REQUIRE(t.runs_by_machines.size() == 4);
    const std::string md = render_markdown(t);
    INFO(md);
    CHECK_THAT(md, Catch::Contains("Machine: " + a + "; " + b + ". Runs by the machines that trained them (in that order): "
                                   "1 on " + a + " (task=reverse_type=rope_seed=1); 1 on " + a + ", then " + b +
                                   " (task=reverse_type=rope_seed=2); 1 on " + b + " (task=reverse_type=alibi_seed=1); "
                                   "1 on not recorded, then " + a + " (task=reverse_type=alibi_seed=2). Last run finished"));
    const Json j = Json::parse(render_json(t));
    CHECK(j.at("runs_by_machines").at(a + ", then " + b) == Json::array({"task=reverse_type=rope_seed=2"}));
    CHECK(j.at("machines") == a + "; " + b);
    fs::remove_all(dir);
}
