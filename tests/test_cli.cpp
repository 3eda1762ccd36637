// The relpos command line: every kind of bad config is one sentence naming the file, line and key,
// exit code 2, and nothing written; --help everywhere; list.
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "experiments/data/json.hpp"
#include "tests/cli_helpers.hpp"

#include <catch2/catch.hpp>

namespace fs = std::filesystem;

namespace {
const std::string kBin = std::string(RELPOS_BINARY_DIR) + "/relpos";
const std::string kFix = std::string(RELPOS_SOURCE_DIR) + "/tests/fixtures/configs/";

using relpos::test::Cmd;
using relpos::test::sh;

// Runs `relpos run` on a bad config: exit 2, one line, the given fragments, no results written.
void expect_config_error(const std::string& config, const std::vector<std::string>& overrides,
                         const std::vector<std::string>& fragments) {
    const std::string out_dir = (fs::temp_directory_path() / ("relpos-cli-" + std::to_string(getpid()))).string();
    fs::remove_all(out_dir);
    std::string cmd = kBin + " run " + config + " results_dir=" + out_dir;
    for (auto& o : overrides) cmd += " '" + o + "'";
    Cmd r = sh(cmd);
    INFO(cmd << "\n" << r.out);
    CHECK(r.code == 2);
    CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 1);  // one sentence
    CHECK_THAT(r.out, Catch::StartsWith("error: "));
    for (auto& f : fragments) CHECK_THAT(r.out, Catch::Contains(f));
    CHECK_FALSE(fs::exists(out_dir));  // nothing written
}
}  // namespace

TEST_CASE("cli/config_error/unknown_key_did_you_mean", "[cli][errors]") {
    expect_config_error(kFix + "unknown_key.yaml", {}, {"unknown_key.yaml:7:", "model.d_modle", "did you mean 'd_model'"});
}
TEST_CASE("cli/config_error/wrong_type", "[cli][errors]") {
    expect_config_error(kFix + "wrong_type.yaml", {}, {"wrong_type.yaml:5:", "train.epochs", "ten"});
}
TEST_CASE("cli/config_error/out_of_range", "[cli][errors]") {
    expect_config_error(kFix + "dropout_range.yaml", {}, {"dropout_range.yaml:5:", "model.dropout", "1.5", "[0, 1)"});
    expect_config_error(kFix + "minimal.yaml", {"train.epochs=-3"}, {"command-line override", "train.epochs"});
}
TEST_CASE("cli/config_error/shaw_k_negative", "[cli][errors]") {
    expect_config_error(kFix + "plugin_bad_option.yaml", {}, {"plugin_bad_option.yaml:7:", "model.position.k", "-1"});
}
TEST_CASE("cli/config_error/heads_do_not_divide_d_model", "[cli][errors]") {
    expect_config_error(kFix + "heads.yaml", {}, {"heads.yaml:", "model.heads", "100", "8"});
}
TEST_CASE("cli/config_error/missing_data_dir", "[cli][errors]") {
    expect_config_error(kFix + "missing_data_dir.yaml", {}, {"missing_data_dir.yaml:4:", "data.dir", "no_such_dir"});
}
TEST_CASE("cli/config_error/unknown_position_encoding_lists_registered", "[cli][errors]") {
    expect_config_error(kFix + "minimal.yaml", {"model.position.type=shwa"},
                        {"model.position", "shwa", "did you mean 'shaw'", "sinusoidal", "learned", "none"});
}
TEST_CASE("cli/config_error/learned_max_len_below_longest_sentence", "[cli][errors]") {
    // tiny_copy's test split has 9-symbol sources; a 6-position table cannot hold them
    expect_config_error(std::string(RELPOS_SOURCE_DIR) + "/tests/fixtures/tiny_copy.yaml",
                        {"model.position={type: learned, max_len: 6}"}, {"max_len", "6", "longest"});
}
TEST_CASE("cli/config_error/yaml_syntax", "[cli][errors]") {
    expect_config_error(kFix + "syntax_error.yaml", {}, {"syntax_error.yaml:", "5"});
}
TEST_CASE("cli/config_error/missing_file_and_bad_override", "[cli][errors]") {
    expect_config_error(kFix + "no_such_config.yaml", {}, {"no_such_config.yaml", "does not exist"});
    expect_config_error(kFix + "minimal.yaml", {"train.epochs"}, {"train.epochs", "="});
    expect_config_error(kFix + "minimal.yaml", {"trian.epochs=2"}, {"trian", "did you mean 'train'"});
}

TEST_CASE("cli/help_on_every_command", "[cli]") {
    for (std::string c : {"", "run", "report", "eval", "translate", "normalize", "list"}) {
        Cmd r = sh(kBin + " " + c + " --help");
        INFO(c << ": " << r.out);
        CHECK(r.code == 0);
        CHECK_THAT(r.out, Catch::Contains("Usage"));
    }
    Cmd none = sh(kBin);
    CHECK(none.code == 2);
}

TEST_CASE("cli/list_shows_encodings_and_tasks", "[cli]") {
    Cmd r = sh(kBin + " list");
    CHECK(r.code == 0);
    for (const char* s : {"none", "sinusoidal", "learned", "shaw", "max_len", "per_head", "copy", "reverse", "local_sum", "multi30k"})
        CHECK_THAT(r.out, Catch::Contains(s));
}

TEST_CASE("cli/list_says_which_unfinished_runs_train_and_how_far", "[cli]") {
    // --list reads a started run's lock file and the last step of its metrics.jsonl (without taking the
    // lock): a live process on this machine is "training", a dead one left an "interrupted" run.
    const std::string out_dir = (fs::temp_directory_path() / ("relpos-list-" + std::to_string(getpid()))).string();
    fs::remove_all(out_dir);
    const std::string cmd = kBin + " run " + std::string(RELPOS_SOURCE_DIR) + "/tests/fixtures/tiny_copy.yaml --list results_dir=" + out_dir;
    Cmd fresh = sh(cmd);
    REQUIRE(fresh.code == 0);
    const std::string id = fresh.out.substr(0, fresh.out.find(' '));
    CHECK_THAT(fresh.out, !Catch::Contains("[") && Catch::Contains("# 0 of 1 run(s) finished, 1 left\n"));
    const fs::path run = fs::path(out_dir) / "tiny_copy" / "runs" / id;
    fs::create_directories(run);
    std::ofstream(run / "metrics.jsonl") << "{\"step\": 5, \"epoch\": 0, \"train_loss\": 1.5}\n"
                                         << "{\"step\": 7, \"epoch\": 1, \"valid_loss\": 1.2}\n"
                                         << "{\"step\": 9, \"epo";  // a line cut by a kill
    char host[256] = {0};
    REQUIRE(gethostname(host, sizeof host - 1) == 0);
    std::ofstream(run / ".lock") << "pid " << getpid() << " on " << host << "\n";
    Cmd live = sh(cmd);
    INFO(live.out);
    CHECK_THAT(live.out, Catch::Contains("[training: pid " + std::to_string(getpid()) + ", step 7, epoch 2]") &&
                             Catch::Contains("1 left (1 started)"));
    const pid_t child = fork();
    if (child == 0) _exit(0);
    REQUIRE(child > 0);
    waitpid(child, nullptr, 0);  // a process that no longer exists
    std::ofstream(run / ".lock") << "pid " << child << " on " << host << "\n";
    CHECK_THAT(sh(cmd).out, Catch::Contains("[interrupted: step 7, epoch 2; resumes from its last checkpoint]"));
    std::ofstream(run / ".lock") << "pid 12 on some-other-machine\n";
    CHECK_THAT(sh(cmd).out, Catch::Contains("[started by pid 12 on some-other-machine: step 7, epoch 2]"));
    fs::remove_all(out_dir);
}

TEST_CASE("cli/sweep_list_and_shards", "[cli]") {
    const std::string cfg = std::string(RELPOS_SOURCE_DIR) + "/configs/table2_clip_k.yaml";
    // one line per point, then (stderr) a "# " line with what is left
    const auto points = [](const std::string& out) {
        return std::count(out.begin(), out.end(), '\n') - (out.find("\n# ") != std::string::npos || out.rfind("# ", 0) == 0);
    };
    Cmd all = sh(kBin + " run " + cfg + " --list");
    REQUIRE(all.code == 0);
    CHECK(points(all.out) == 21);  // 7 values of k x 3 seeds
    CHECK_THAT(all.out, Catch::Contains("# 21 of 21 run(s) finished, 0 left"));  // the committed 1,000-update runs
    std::size_t total = 0;
    for (int i = 0; i < 4; ++i) {
        Cmd s = sh(kBin + " run " + cfg + " --list --shard " + std::to_string(i) + "/4");
        REQUIRE(s.code == 0);
        total += points(s.out);
    }
    CHECK(total == 21);
    Cmd some = sh(kBin + " run " + cfg + " --list 'sweep.seeds=[1, 2, 3, 4]'");
    REQUIRE(some.code == 0);
    CHECK_THAT(some.out, Catch::Contains("# 21 of 28 run(s) finished, 7 left; at the finished runs' mean training time, per cell"));
    // every seed-4 run is in a cell (a value of k) with finished runs: none counted at the mean over all
    CHECK_THAT(some.out, !Catch::Contains("no finished run yet"));
    Cmd bad = sh(kBin + " run " + cfg + " --list --shard 4/4");
    CHECK(bad.code == 2);
    // --only: the points whose id matches, with the whole sweep's ids (and run names), then --shard splits them
    Cmd only = sh(kBin + " run " + cfg + " --list --only 'k=16_*'");
    REQUIRE(only.code == 0);
    CHECK(points(only.out) == 3);  // 3 seeds
    CHECK_THAT(only.out, Catch::Contains("k=16_seed=2"));
    CHECK_THAT(only.out, Catch::Contains("# 3 of 3 run(s) finished, 0 left"));
    Cmd only_shard = sh(kBin + " run " + cfg + " --list --only 'k=16_*' --shard 1/3");
    REQUIRE(only_shard.code == 0);
    CHECK(points(only_shard.out) == 1);
    CHECK_THAT(only_shard.out, Catch::Contains("k=16_seed=2"));
    Cmd none = sh(kBin + " run " + cfg + " --list --only 'k=3_*'");
    CHECK(none.code == 2);
    CHECK_THAT(none.out, Catch::Contains("--only 'k=3_*': matches none of the 21 run id(s)"));
    // a run's own config.yaml keeps its experiment's sweep: run from the run's directory it is that run only
    const std::string own_cfg = std::string(RELPOS_SOURCE_DIR) + "/results/table2_clip_k/runs/k=16_seed=2/config.yaml";
    Cmd own = sh(kBin + " run " + own_cfg + " --list");
    REQUIRE(own.code == 0);
    CHECK_THAT(own.out, Catch::Contains("is the config of the run k=16_seed=2") &&
                            Catch::Contains("# 1 of 1 run(s) finished, 0 left"));
    CHECK_THAT(own.out, !Catch::Contains("k=16_seed=1"));
    Cmd own_only = sh(kBin + " run " + own_cfg + " --list --only 'k=16_*'");  // --only says which points
    REQUIRE(own_only.code == 0);
    CHECK_THAT(own_only.out, Catch::Contains("# 3 of 3 run(s) finished, 0 left") && !Catch::Contains("is the config of"));
}

TEST_CASE("cli/eval --split scores a language model (subword) run as its final evaluation did", "[cli][e2e][lm]") {
    // The Brown sample in the repository: the subword model is retrained from the run's data and must be the
    // run's own, byte for byte; then the numbers are results.json's, and other windows or strides are new ones.
    const fs::path out = fs::temp_directory_path() / ("relpos-eval-lm-" + std::to_string(getpid()));
    fs::remove_all(out);
    fs::create_directories(out);
    const std::string cfg = (out / "lm.yaml").string();
    // Two seeds side by side (--jobs 2): each run gets 1 of the config's 2 threads, which config.yaml does not
    // record; eval must use the run's (results.json's), not the config's.
    std::ofstream(cfg) << "name: lm\nseed: 2\nthreads: 2\nsweep: {seeds: [2, 3]}\ndata: {task: brown, dir: " << RELPOS_SOURCE_DIR
                       << "/data/brown/sample, vocab_size: 200, lm: {context: 16, eval_lengths: [16, 32], stride: 4, "
                          "max_eval_tokens: 400}}\n"
                          "model: {family: decoder_only, d_model: 16, heads: 2, d_ff: 32, decoder_layers: 1, position: {type: alibi}}\n"
                          "train: {epochs: 1, max_steps: 6, batch_tokens: 256, lr: 0.5, warmup: 2}\n"
                          "eval: {splits: [val, test], metrics: [ppl, ppl_sliding], split_metrics: {val: [ppl]}}\n"
                          "report: {metrics: [test.ppl_sliding@32]}\n";
    REQUIRE(sh(kBin + " run " + cfg + " results_dir=" + out.string() + " --jobs 2 --quiet").code == 0);
    const std::string run = (out / "lm" / "runs" / "seed=2").string();
    const YAML::Node results = YAML::LoadFile(run + "/results.json");
    REQUIRE(results["threads"].as<int>() == 1);
    REQUIRE(results["metrics"]["test.ppl_sliding@32"].IsDefined());
    CHECK_FALSE(results["metrics"]["val.ppl_sliding@32"].IsDefined());  // eval.split_metrics
    auto metrics = [&](const std::string& args) {
        Cmd c = sh(kBin + " eval --run " + run + " --split test " + args);
        INFO(args << "\n" << c.out);
        REQUIRE(c.code == 0);
        const YAML::Node line = YAML::Load(c.out.substr(c.out.rfind("\n{") + 1));
        CHECK(line["threads"].as<int>() == 1);  // the run's, not config.yaml's 2
        CHECK(line["machine"].as<std::string>() == results["machine"].as<std::string>());  // provenance
        CHECK(line["commit"].as<std::string>() == results["commit"].as<std::string>());
        CHECK(line["evaluated"].as<std::string>().size() == 20);  // 2026-11-28T22:33:12Z
        return line["metrics"];
    };
    const YAML::Node same = metrics("");
    std::size_t n = 0;
    for (auto it : same) {
        INFO(it.first.as<std::string>());
        CHECK(it.second.as<double>() == results["metrics"]["test." + it.first.as<std::string>()].as<double>());
        ++n;
    }
    CHECK(n == 5);  // ppl, ppl@16, ppl@32, ppl_sliding@16, ppl_sliding@32
    CHECK(metrics("data.lm.stride=2")["ppl_sliding@32"].as<double>() != results["metrics"]["test.ppl_sliding@32"].as<double>());
    // fewer metrics than the run's report names: the report plays no part in an evaluation
    const YAML::Node fewer = metrics("'eval.metrics=[ppl]'");
    CHECK(fewer["ppl@32"].as<double>() == results["metrics"]["test.ppl@32"].as<double>());
    CHECK_FALSE(fewer["ppl_sliding@32"].IsDefined());
    {  // eval --config over both seeds (one SentencePiece model retrained for the two): each run's own numbers
        std::ofstream(cfg, std::ios::app) << "results_dir: " << out.string() << "\n";
        const fs::path evals = out / "evals";
        Cmd all = sh(kBin + " eval --config " + cfg + " --split test --out " + evals.string());
        INFO(all.out);
        REQUIRE(all.code == 0);
        CHECK_THAT(all.out, Catch::Contains("2 of 2 matched run(s) evaluated"));
        for (const std::string id : {"seed=2", "seed=3"}) {
            const YAML::Node line = YAML::LoadFile((evals / (id + ".json")).string());
            const YAML::Node own = YAML::LoadFile((out / "lm" / "runs" / id / "results.json").string())["metrics"];
            std::size_t k = 0;
            for (auto it : line["metrics"]) {
                INFO(id << " " << it.first.as<std::string>());
                CHECK(it.second.as<double>() == own["test." + it.first.as<std::string>()].as<double>());
                ++k;
            }
            CHECK(k == 5);
        }
    }
    // evaluated elsewhere (another machine or kernel family): said, since the last digits may then differ
    CHECK_THAT(sh(kBin + " eval --run " + run + " --split test").out, !Catch::Contains("note: "));
    {
        relpos::Json j = relpos::Json::parse(std::ifstream(run + "/results.json"));
        j["machine"] = "another machine";
        std::ofstream(run + "/results.json") << j.dump();
    }
    CHECK_THAT(sh(kBin + " eval --run " + run + " --split test").out,
               Catch::Contains("was evaluated on \"another machine\", this evaluation runs on"));
    // another subword model than the run's: refused, not scored with the wrong ids
    std::ofstream(run + "/subword.model", std::ios::app) << "x";
    Cmd bad = sh(kBin + " eval --run " + run + " --split test");
    CHECK(bad.code == 2);
    CHECK_THAT(bad.out, Catch::Contains("the subword model retrained from the run's data differs from the run's own"));
    fs::remove_all(out);
}

TEST_CASE("cli/eval --split scores a run's best checkpoint as its final evaluation did", "[cli][e2e]") {
    const fs::path out = fs::temp_directory_path() / ("relpos-eval-split-" + std::to_string(getpid()));
    fs::remove_all(out);
    const std::string fixture = std::string(RELPOS_SOURCE_DIR) + "/tests/fixtures/tiny_encoder_only.yaml";
    REQUIRE(sh(kBin + " run " + fixture + " results_dir=" + out.string() + " --quiet").code == 0);
    const std::string run = (out / "tiny_encoder_only" / "runs" / "seed=3").string();
    const YAML::Node results = YAML::LoadFile(run + "/results.json");
    // The same numbers as results.json, split by split.
    Cmd same = sh(kBin + " eval --run " + run + " --split val --split test");
    INFO(same.out);
    REQUIRE(same.code == 0);
    std::istringstream lines(same.out);
    std::size_t n = 0;
    for (std::string line; std::getline(lines, line);) {
        if (line.rfind("{", 0) != 0) continue;  // the data's log lines (stderr, merged by sh)
        ++n;
        const YAML::Node j = YAML::Load(line);
        const std::string split = j["split"].as<std::string>();
        CHECK(j["checkpoint_step"].as<long>() > 0);
        for (auto it : j["metrics"]) {
            INFO(split << "." << it.first.as<std::string>());
            CHECK(it.second.as<double>() == results["metrics"][split + "." + it.first.as<std::string>()].as<double>());
        }
    }
    CHECK(n == 2);
    // Longer test inputs than the run was tested on: new lengths, nothing of the run changed.
    Cmd longer = sh(kBin + " eval --run " + run + " --split test 'data.synthetic.test_len=[6, 10]'");
    REQUIRE(longer.code == 0);
    CHECK(YAML::Load(longer.out.substr(longer.out.find("\n{") + 1))["metrics"]["accuracy@10"].IsDefined());
    CHECK_FALSE(results["metrics"]["test.accuracy@10"].IsDefined());
    CHECK(YAML::LoadFile(run + "/results.json")["metrics"].size() == results["metrics"].size());
    // Randomized positions: the evaluation's own options and draw stream are the overrides'.
    const std::string rrun = (out / "r" / "tiny_encoder_only" / "runs" / "seed=3").string();
    REQUIRE(sh(kBin + " run " + fixture + " results_dir=" + (out / "r").string() +
               " 'model.position={type: rope, randomized: 32, randomized_eval: sample_by_length}' --quiet").code == 0);
    auto loss = [&](const std::string& overrides) {
        Cmd c = sh(kBin + " eval --run " + rrun + " --split test " + overrides);
        INFO(overrides << "\n" << c.out);
        REQUIRE(c.code == 0);
        return YAML::Load(c.out.substr(c.out.find("\n{") + 1))["metrics"]["loss"].as<double>();
    };
    const double as_run = YAML::LoadFile(rrun + "/results.json")["metrics"]["test.loss"].as<double>();
    CHECK(loss("") == as_run);
    CHECK(loss("seed=4") != as_run);
    CHECK(loss("model.position.randomized_eval=identity") != as_run);
    // rope's scaling (evaluation only): past its length a new number, within it the run's own
    CHECK(loss("model.position.scaling=ntk model.position.scaling_length=1000") == as_run);
    CHECK(loss("model.position.scaling=linear model.position.scaling_length=2") != as_run);
    // What eval refuses, in one sentence each.
    auto refused = [&](const std::string& args, const std::string& fragment) {
        Cmd r = sh(kBin + " eval --run " + run + " " + args);
        INFO(args << "\n" << r.out);
        CHECK(r.code == 2);
        CHECK_THAT(r.out, Catch::StartsWith("error: ") && Catch::Contains(fragment));
    };
    refused("--split test model.d_model=8", "model.d_model=8': relpos eval changes only how the trained model is evaluated");
    refused("--split test train.lr=0.1", "'train.lr' is not one of them");
    {  // an option of the run's encoding that is not evaluation-only (it changes what the model trained)
        Cmd r = sh(kBin + " eval --run " + rrun + " --split test model.position.base=100");
        INFO(r.out);
        CHECK(r.code == 2);
        CHECK_THAT(r.out, Catch::Contains("'model.position.base' is not one of them"));
    }
    refused("--split nope", "--split nope: not a split of the run's data (val, test, train)");
    refused("--split test --src x.txt", "--src, --ref, --out and --beam are for parallel files");
    refused("", "give --src and --ref (parallel files), or --split");
    refused("--src a --ref b eval.beam=2", "overrides (eval.beam=2) go with --split");
    fs::remove_all(out);
}

TEST_CASE("cli/eval --config scores every finished run of an experiment, one file per run, and resumes", "[cli][e2e]") {
    const fs::path out = fs::temp_directory_path() / ("relpos-eval-config-" + std::to_string(getpid()));
    fs::remove_all(out);
    fs::create_directories(out);
    // the encoder-only fixture as a 2 x 2 sweep whose results_dir is this test's
    std::ifstream in(std::string(RELPOS_SOURCE_DIR) + "/tests/fixtures/tiny_encoder_only.yaml");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    text.replace(text.find("results_dir: /tmp/relpos-tests"), 30, "results_dir: " + (out / "r").string());
    text += "sweep: {seeds: [3, 4], grid: {model.position: [{type: t5}, {type: rope}]}}\n";
    const std::string cfg = (out / "tiny.yaml").string();
    std::ofstream(cfg) << text;
    REQUIRE(sh(kBin + " run " + cfg + " --quiet").code == 0);
    const fs::path runs = out / "r" / "tiny_encoder_only" / "runs", evals = out / "evals";
    fs::remove_all(runs / "position=type-t5_seed=4" / "checkpoints");  // as a run committed without checkpoints
    const std::string eval = kBin + " eval --config " + cfg + " --split test --out " + evals.string() + " ";

    // a bad override: refused for the runs it would change, before anything is written
    Cmd bad = sh(eval + "model.d_model=8");
    CHECK(bad.code == 2);
    CHECK_THAT(bad.out, Catch::Contains("relpos eval changes only how the trained model is evaluated"));
    CHECK_FALSE(fs::exists(evals));

    // the runs of one encoding: their numbers are those of eval --run, with the run id
    Cmd rope = sh(eval + "--runs 'position=type-rope_*' 'data.synthetic.test_len=[6, 10]'");
    INFO(rope.out);
    REQUIRE(rope.code == 0);
    CHECK_THAT(rope.out, Catch::Contains("2 of 2 matched run(s) evaluated into"));
    CHECK(fs::exists(evals / "position=type-rope_seed=3.json"));
    CHECK_FALSE(fs::exists(evals / "position=type-t5_seed=3.json"));
    const YAML::Node line = YAML::LoadFile((evals / "position=type-rope_seed=4.json").string());
    CHECK(line["id"].as<std::string>() == "position=type-rope_seed=4");
    CHECK(line["split"].as<std::string>() == "test");
    Cmd one = sh(kBin + " eval --run " + (runs / "position=type-rope_seed=4").string() +
                 " --split test 'data.synthetic.test_len=[6, 10]'");
    REQUIRE(one.code == 0);
    const YAML::Node single = YAML::Load(one.out.substr(one.out.find("\n{") + 1));
    REQUIRE(line["metrics"].size() == single["metrics"].size());
    for (auto it : single["metrics"])
        CHECK(line["metrics"][it.first.as<std::string>()].as<double>() == it.second.as<double>());
    CHECK(line["metrics"]["accuracy@10"].IsDefined());

    // the whole experiment: the two evaluated are kept (not redone), the one without a checkpoint is named
    const auto before = fs::last_write_time(evals / "position=type-rope_seed=3.json");
    Cmd all = sh(eval + "'data.synthetic.test_len=[6, 10]'");
    INFO(all.out);
    REQUIRE(all.code == 0);
    CHECK_THAT(all.out, Catch::Contains("1 of 4 matched run(s) evaluated") && Catch::Contains("2 there already (kept)") &&
                            Catch::Contains("1 without a best checkpoint here") &&
                            Catch::Contains("position=type-t5_seed=4"));
    CHECK(fs::last_write_time(evals / "position=type-rope_seed=3.json") == before);
    CHECK(fs::exists(evals / "position=type-t5_seed=3.json"));
    CHECK_FALSE(fs::exists(evals / "position=type-t5_seed=4.json"));

    // what it refuses, in one sentence each
    auto refused = [&](const std::string& args, const std::string& fragment) {
        Cmd r = sh(kBin + " eval " + args);
        INFO(args << "\n" << r.out);
        CHECK(r.code == 2);
        CHECK_THAT(r.out, Catch::StartsWith("error: ") && Catch::Contains(fragment));
    };
    refused("--config " + cfg + " --split test", "give --out DIR");
    refused("--config " + cfg + " --out " + evals.string(), "give --split");
    refused("--config " + cfg + " --split test --out " + evals.string() + " --runs 'nope*'",
            "--runs 'nope*': matches none of the 4 run id(s)");
    refused("--config " + cfg + " --run x --split test", "give --run DIR (one run) or --config CONFIG");
    refused("--split test", "give --run DIR (one run) or --config CONFIG");
    refused("--run x --runs 'a*' --split test", "--runs selects runs of --config");
    fs::remove_all(out);
}
