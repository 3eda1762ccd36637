// relpos report: the competence view of gated runs and report axes that join several swept keys.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "experiments/data/json.hpp"
#include "experiments/report/report.hpp"

using namespace relpos;
namespace fs = std::filesystem;

namespace {

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
