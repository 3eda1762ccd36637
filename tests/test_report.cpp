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
    REQUIRE(!t.family_t.empty());
    CHECK(t.family_t.front().n == 2);  // the Holm family tests the gated pairs
    CHECK_THAT(render_markdown(t), Catch::Contains("Only competent runs are paired"));
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
    CHECK((*k0)["delta_vs_baseline"] == Json{{"baseline", "16"}, {"mean", -20.0}, {"std", nullptr}, {"n", 1}});
    // a second k = 0 seed: differences -20 and -19, sd 0.71, t = -19.5 / (0.71 / sqrt 2) = -39, beyond
    // the 5% critical value for 1 degree of freedom (12.706); the 95% interval is
    // -19.5 ± 12.706 * 0.5 = [-25.85, -13.15]
    const std::string k0s2 = dir + "/fixture_k/runs/k=0_seed=2";
    fs::create_directories(k0s2);
    std::ofstream(k0s2 + "/results.json") << "{\"id\": \"k=0_seed=2\", \"labels\": {\"model.position.k\": \"0\", \"seed\": \"2\"}, "
                                             "\"metrics\": {\"test2016.bleu_tok\": 12.0, \"val.bleu_tok\": 13.0}}\n";
    const ReportTables t2 = build_report(dir + "/fixture_k");
    CHECK_THAT(render_markdown(t2), Catch::Contains("-19.50 [-25.85, -13.15] n=2 t=-39.0†"));
    // The family of comparisons: k = 0 is now a paired t-test with a spread (t = -39, 1 df: p = 0.0163);
    // k = 16 has no spread (the same values as the baseline) and n = 1 rows have no test: a family of one
    // per metric that has one, Holm-adjusted over the family.
    REQUIRE_FALSE(t2.family_t.empty());
    for (const auto& c : t2.family_t) {
        CHECK(c.p_holm >= c.p);
        CHECK(c.p_holm <= 1.0);
    }
    const auto k0t = std::find_if(t2.family_t.begin(), t2.family_t.end(), [](const auto& c) {
        return c.a == "0" && c.metric == "test2016.bleu_tok";
    });
    REQUIRE(k0t != t2.family_t.end());
    CHECK(k0t->p == Approx(0.0163).margin(2e-4));
    std::vector<double> raw;
    for (const auto& c : t2.family_t) raw.push_back(c.p);
    CHECK(k0t->p_holm == Approx(holm_adjust(raw)[std::size_t(k0t - t2.family_t.begin())]).margin(1e-12));
    CHECK(k0t->p_holm > k0t->p);  // a family of more than one: the adjustment costs something
    CHECK_THAT(render_markdown(t2), Catch::Contains("### Multiplicity (Holm)") && Catch::Contains("| 0 − 16 | test2016.bleu_tok | 2 |"));
    // and what the family's size asks of a 2-seed comparison: p < 0.05 / m, the |t| that gives it with 1 df
    const std::size_t m = t2.family_t.size();
    CHECK_THAT(render_markdown(t2), Catch::Contains(fmt::format("The first comparison to hold needs p < 0.05/{} = {:.2g}: |t| > {:.1f} with 2 seeds (1 df)",
                                                                m, 0.05 / double(m), t_for_two_sided_p(0.05 / double(m), 1))));
    CHECK(t_for_two_sided_p(0.05 / double(m), 1) > 12.706);  // more than the unadjusted 5% point
    // A contrast that repeats a baseline comparison (0 - 16 with baseline 16) is the same test: counted once.
    std::ofstream(dir + "/fixture_k/experiment.yaml", std::ios::app) << "  contrasts: [[\"0\", \"16\"]]\n";
    const ReportTables t3 = build_report(dir + "/fixture_k");
    CHECK(t3.family_t.size() == t2.family_t.size());
    const Json fam = Json::parse(render_json(t2))["family_t"];
    REQUIRE(fam.is_array());
    CHECK(std::any_of(fam.begin(), fam.end(), [](const Json& c) { return c["row"] == "0" && c.contains("p_holm"); }));
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
