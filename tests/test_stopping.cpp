// When training stops: the plateau rule's two forms (train.stop.rule) and the competence target
// (train.stop.target_metric / target) with what results.json records of it.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <yaml-cpp/yaml.h>

#include "experiments/eval/scoring.hpp"
#include "experiments/run/experiment.hpp"
#include "experiments/train/trainer.hpp"
#include "tests/helpers.hpp"

using namespace relpos;
namespace fs = std::filesystem;

namespace {

// Replays the trainer's bookkeeping over a sequence of validation losses; returns the 1-based index of
// the validation after which the run stops (0: it never does).
std::size_t stops_after(const std::string& rule, const std::vector<double>& losses, long patience, double min_delta) {
    TrainConfig cfg;
    cfg.stop_rule = rule;
    cfg.patience = patience;
    cfg.min_delta = min_delta;
    TrainProgress pr;
    for (std::size_t v = 0; v < losses.size(); ++v) {
        count_validation(cfg, losses[v], pr);
        if (losses[v] < pr.best_valid_loss) pr.best_valid_loss = losses[v];  // the trainer's best checkpoint
        if (pr.bad_validations >= static_cast<std::uint64_t>(patience)) return v + 1;
    }
    return 0;
}

// A config file of `text` in a fresh directory of this test process.
std::string write_config(const std::string& name, const std::string& text) {
    const fs::path dir = fs::temp_directory_path() / ("relpos-stopping-" + std::to_string(getpid()));
    fs::create_directories(dir);
    std::ofstream(dir / name) << text;
    return (dir / name).string();
}

}  // namespace

TEST_CASE("stopping/the two plateau rules differ on a slow steady fall", "[training][stopping]") {
    // A loss falling 0.0015 nats per validation, min_delta 0.002, patience 3 (issue: 9 of the 43 converged
    // runs stopped so). running_best compares with the latest loss, so no validation counts and the run
    // stops after 1 + 3 validations; improvement keeps its reference until the fall exceeds 0.002, so
    // every second validation counts and the run goes on.
    std::vector<double> losses;
    for (int v = 0; v < 20; ++v) losses.push_back(2.0 - 0.0015 * v);
    CHECK(stops_after("running_best", losses, 3, 0.002) == 4);
    CHECK(stops_after("improvement", losses, 3, 0.002) == 0);
    // A real plateau stops both, after the same validation.
    std::vector<double> flat = {2.0, 1.5, 1.2, 1.1995, 1.1991, 1.1990, 1.1989};
    CHECK(stops_after("running_best", flat, 3, 0.002) == 6);
    CHECK(stops_after("improvement", flat, 3, 0.002) == 6);
    // improvement: the reference moves only on an improvement; a new minimum by less than min_delta
    // does not reset the count.
    TrainConfig cfg;
    cfg.stop_rule = "improvement";
    cfg.min_delta = 0.01;
    TrainProgress pr;
    count_validation(cfg, 1.0, pr);
    CHECK(pr.bad_validations == 0);
    CHECK(pr.plateau_reference == 1.0);
    count_validation(cfg, 0.995, pr);
    CHECK(pr.bad_validations == 1);
    CHECK(pr.plateau_reference == 1.0);
    count_validation(cfg, 0.989, pr);
    CHECK(pr.bad_validations == 0);
    CHECK(pr.plateau_reference == 0.989);
}

TEST_CASE("stopping/the rule is read, defaults to improvement, and keeps the hash of configs before it", "[config][stopping]") {
    auto cfg = [&](const std::string& file, const std::string& stop) {
        return load_config(write_config(file, "name: t\ndata: {task: copy}\ntrain: {stop: " + stop + "}\n"));
    };
    CHECK(cfg("a.yaml", "{patience: 5, min_delta: 0.002}").train.stop_rule == "improvement");
    const auto old = cfg("b.yaml", "{patience: 5, min_delta: 0.002, rule: running_best}");
    CHECK(old.train.stop_rule == "running_best");
    // running_best is what a config without the key computed before it existed: the same hash as the
    // text without it had then (the converged runs stay matched); improvement is another run.
    const auto now = cfg("c.yaml", "{patience: 5, min_delta: 0.002, rule: improvement}");
    CHECK(config_hash(old) != config_hash(now));
    CHECK_THAT(to_yaml(old), Catch::Contains("rule: running_best"));  // the write-out reads back the same
    CHECK(load_config(write_config("d.yaml", to_yaml(old))).train.stop_rule == "running_best");
    CHECK_THROWS_WITH(cfg("e.yaml", "{patience: 5, rule: latest}"),
                      Catch::Contains("rule") && Catch::Contains("improvement, running_best"));
    CHECK_THROWS_WITH(cfg("f.yaml", "{target: 99}"), Catch::Contains("target_metric"));
    CHECK_THROWS_WITH(cfg("g.yaml", "{target_metric: accuracy}"), Catch::Contains("needs stop.target"));
    CHECK_THROWS_WITH(cfg("h.yaml", "{rule: running_best, target_metric: accuracy, target: 99}"),
                      Catch::Contains("rule: improvement"));
}

TEST_CASE("stopping/the competence target stops the run and results.json records it", "[training][stopping][e2e]") {
    const fs::path results = fs::temp_directory_path() / ("relpos-competence-" + std::to_string(getpid()));
    fs::remove_all(results);
    RunOptions opt;
    opt.quiet = true;
    const std::string fixture = std::string(RELPOS_SOURCE_DIR) + "/tests/fixtures/tiny_encoder_only.yaml";
    // (a target outside [0, 100] is refused: tests/test_refusals.cpp)
    auto run = [&](const std::string& name, const std::string& metric, const std::string& target) {
        REQUIRE(run_experiment(fixture,
                               {"results_dir=" + results.string(), "name=" + name, "train.epochs=3", "train.eval_every=10",
                                "train.stop.target_metric=" + metric, "train.stop.target=" + target,
                                "eval.metrics=[accuracy, token_accuracy, extension_ratio, loss]"},
                               opt) == 0);
        return YAML::LoadFile((results / name / "runs" / "seed=3" / "results.json").string());
    };
    SECTION("a target every model reaches: the first validation stops it") {
        // 1% of the answer tokens right: chance alone (6 symbols) gets about 17% at the first validation
        const YAML::Node r = run("reached", "token_accuracy", "1");
        CHECK(r["stop_reason"].as<std::string>() == "target");
        CHECK(r["steps"].as<int>() == 10);
        CHECK(r["competence"]["metric"].as<std::string>() == "val.token_accuracy");
        CHECK(r["competence"]["reached"].as<bool>());
        CHECK(r["competence"]["step"].as<int>() == 10);
        CHECK(r["competence"]["target"].as<double>() == 1.0);
        // the best checkpoint is the one evaluated: its validation accuracy is the final val.token_accuracy
        CHECK(r["competence"]["best"].as<double>() ==
              Approx(r["metrics"]["val.token_accuracy"].as<double>()).margin(1e-3));
    }
    SECTION("a target no model reaches: trained to the cap, not reached, the best validation accuracy kept") {
        // every answer exactly right after 3 epochs of 300 examples: out of this tiny model's reach
        const YAML::Node r = run("unreached", "accuracy", "100");
        CHECK(r["stop_reason"].as<std::string>() == "epochs");
        CHECK_FALSE(r["competence"]["reached"].as<bool>());
        CHECK(r["competence"]["step"].as<int>() == 0);
        CHECK(r["competence"]["best"].as<double>() == Approx(r["metrics"]["val.accuracy"].as<double>()).margin(1e-3));
        // every validation logged both accuracies
        std::ifstream f(results / "unreached" / "runs" / "seed=3" / "metrics.jsonl");
        std::string line;
        int validations = 0;
        while (std::getline(f, line))
            if (line.find("valid_loss") != std::string::npos) {
                ++validations;
                CHECK(line.find("\"val.accuracy\"") != std::string::npos);
                CHECK(line.find("\"val.token_accuracy\"") != std::string::npos);
            }
        CHECK(validations >= 2);
    }
    SECTION("a metric the task does not compute at validation is refused before training") {
        RunOptions o = opt;
        CHECK_THROWS_WITH(run_experiment(fixture,
                                         {"results_dir=" + results.string(), "name=bad", "train.stop.target_metric=bleu_tok",
                                          "train.stop.target=1"},
                                         o),
                          Catch::Contains("train.stop.target_metric") && Catch::Contains("accuracy, token_accuracy"));
    }
    fs::remove_all(results);
}
