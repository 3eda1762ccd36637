// Run names: the config hash and run_identity of finished runs stay what they were when options and keys
// are added (Options::omit_from_run_name_at, TaskDataSchema::named_sections), and an encoding that adds
// nothing names the run of {type: none}.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>

#include <catch2/catch.hpp>

#include <yaml-cpp/yaml.h>

#include "autodiff/rng.hpp"
#include "experiments/data/json.hpp"
#include "experiments/run/continuation.hpp"
#include "experiments/run/identity.hpp"
#include "experiments/run/store.hpp"
#include "experiments/run/sweep.hpp"
#include "nn/options.hpp"
#include "nn/position.hpp"

using namespace relpos;
namespace fs = std::filesystem;

namespace {

const std::string kSrc = std::string(RELPOS_SOURCE_DIR);

std::string write_config(const std::string& name, const std::string& text) {
    const fs::path d = fs::temp_directory_path() / ("relpos-naming-" + std::to_string(getpid()));
    fs::create_directories(d);
    const fs::path p = d / name;
    std::ofstream(p) << text;
    return p.string();
}

}  // namespace

TEST_CASE("tasks/the new keys leave the names of finished runs unchanged", "[tasks][config]") {
    // Run store names of converged Table 1 runs trained before model.family and data.lm existed
    // (results/converged/runs): a config that does not use the new keys must hash as it did.
    const std::string cfg = kSrc + "/configs/converged/table1.yaml";
    ExperimentConfig top = load_config(cfg);
    std::map<std::string, std::string> ids;
    for (const auto& p : expand_sweep(top, cfg, {})) ids[p.id] = run_identity(p.config);
    CHECK(ids.at("seed=1_position=type-none") == "36b50295eb656fe3");
    CHECK(ids.at("seed=1_position=type-sinusoidal") == "8fde36e5ba9ce35c");
    CHECK(ids.at("seed=1_position=type-shaw-k-16") == "6b4637bb645d423e");
    CHECK(ids.at("seed=2_position=type-none") == "8c7ccdb2a70375e6");
}

TEST_CASE("tasks/Shaw with neither term names the no-position run; the other Table 3 rows keep their own", "[tasks][config]") {
    // Converged Table 3's last row is Table 1's no-position model (the same computation bit for bit), so
    // the run store trains it once; its other rows are runs of their own.
    const std::string t1 = kSrc + "/configs/converged/table1.yaml", t3 = kSrc + "/configs/converged/table3.yaml";
    ExperimentConfig top1 = load_config(t1), top3 = load_config(t3);
    std::map<std::string, std::string> ids1, ids3;
    for (const auto& p : expand_sweep(top1, t1, {})) ids1[p.id] = run_identity(p.config);
    for (const auto& p : expand_sweep(top3, t3, {})) ids3[p.id] = run_identity(p.config);
    for (int seed = 1; seed <= 5; ++seed) {
        const std::string s = "seed=" + std::to_string(seed) + "_position=type-";
        CHECK(ids3.at(s + "shaw-k-16-keys-false-values-false") == ids1.at(s + "none"));
        CHECK(ids3.at(s + "shaw-k-16-keys-true-values-true") == ids1.at(s + "shaw-k-16"));
        CHECK(ids3.at(s + "shaw-k-16-keys-true-values-false") != ids1.at(s + "none"));
        CHECK(ids3.at(s + "shaw-k-16-keys-false-values-true") != ids1.at(s + "none"));
        CHECK(ids3.at(s + "shaw-k-16-keys-true-values-false") != ids3.at(s + "shaw-k-16-keys-false-values-true"));
    }
    auto id = [](const std::string& file, const std::string& pos) {
        return run_identity(load_config(write_config(file, "name: t\ndata: {task: copy}\nmodel: {position: " + pos + "}\n")));
    };
    // randomized positions draw from the generator even without a term: a run of its own
    CHECK(id("n1.yaml", "{type: shaw, keys: false, values: false, randomized: 64}") != id("n2.yaml", "{type: none}"));
    // the rule is the encoding's own claim (adds_nothing), whatever the other options say
    CHECK(id("n3.yaml", "{type: shaw, k: 4, keys: false, values: false, per_head: true}") == id("n2.yaml", "{type: none}"));
    CHECK(id("n4.yaml", "{type: sinusoidal}") != id("n2.yaml", "{type: none}"));
    // whether each registered encoding's claim is true: tests/test_position_generic.cpp
}

TEST_CASE("tasks/randomized_eval: identity names the run the option's absence names", "[tasks][config]") {
    auto id = [](const std::string& file, const std::string& pos) {
        return run_identity(load_config(write_config(file, "name: t\ndata: {task: copy}\nmodel: {family: decoder_only, "
                                                                 "position: " + pos + "}\n")));
    };
    const std::string plain = id("r1.yaml", "{type: rope, randomized: 64}");
    CHECK(id("r2.yaml", "{type: rope, randomized: 64, randomized_eval: identity}") == plain);
    CHECK(id("r3.yaml", "{type: rope, randomized: 64, randomized_eval: sample}") != plain);
    CHECK(id("r4.yaml", "{type: rope}") != plain);
}

TEST_CASE("tasks/shaw's init_rows: 0 names the run the option's absence names", "[tasks][config]") {
    // init_rows came after the converged campaign: at its default a Shaw run keeps its name (the run
    // store would otherwise retrain every finished Shaw run); another value is a run of its own.
    auto id = [](const std::string& file, const std::string& pos) {
        return run_identity(load_config(write_config(file, "name: t\ndata: {task: copy}\nmodel: {position: " + pos + "}\n")));
    };
    const std::string plain = id("i1.yaml", "{type: shaw, k: 256}");
    CHECK(id("i2.yaml", "{type: shaw, k: 256, init_rows: 0}") == plain);
    CHECK(id("i3.yaml", "{type: shaw, k: 256, init_rows: 33}") != plain);
    CHECK(id("i4.yaml", "{type: shaw, k: 256, init_rows: 513}") != plain);  // = 2k+1: the same bound, another name
}

TEST_CASE("tasks/alibi's bidirectional: symmetric names the run {type: alibi} named before the option", "[tasks][config]") {
    // Before `bidirectional` existed, {type: alibi} was the symmetric form and its identity had the one
    // option it then had filled in (cross_attention: false). The symmetric form keeps that identity; the
    // new default (offset) is another computation and names another run.
    auto cfg = [](const std::string& file, const std::string& pos) {
        return load_config(write_config(file, "name: t\ndata: {task: copy}\nmodel: {family: encoder_only, position: " + pos + "}\n"));
    };
    const std::string before = config_hash(cfg("a0.yaml", "{type: alibi, cross_attention: false}"));
    CHECK(run_identity(cfg("a1.yaml", "{type: alibi, bidirectional: symmetric}")) == before);
    CHECK(run_identity(cfg("a2.yaml", "{type: alibi}")) != before);
    CHECK(run_identity(cfg("a3.yaml", "{type: alibi}")) == run_identity(cfg("a4.yaml", "{type: alibi, bidirectional: offset}")));
}

TEST_CASE("tasks/run_identity leaves the config it names unchanged", "[tasks][config]") {
    // An ExperimentConfig copy shares its position nodes (YAML::Node is a handle): run_identity fills the
    // encodings' defaults into its own copy, which must not write through into the caller's nodes (it did:
    // `p.node = node` rebinds nothing, it rewrites the node both handles refer to).
    for (const std::string pos : {"{type: shaw, k: 16}", "[{type: sinusoidal}, {type: shaw, k: 4, values: false}]",
                                  "{type: shaw, k: 16, keys: false, values: false}", "{type: alibi, bidirectional: symmetric}",
                                  "{type: rope, randomized: 64, randomized_eval: identity}"}) {
        INFO(pos);
        const ExperimentConfig cfg = load_config(write_config(
            "m.yaml", "name: t\ndata: {task: copy}\nmodel: {family: encoder_only, position: " + pos + "}\n"));
        std::vector<std::string> before;
        for (const auto& p : cfg.model.position) before.push_back(value_yaml(p.node));
        const std::string hash = config_hash(cfg), yaml = to_yaml(cfg);
        const std::string id = run_identity(cfg);
        std::vector<std::string> after;
        for (const auto& p : cfg.model.position) after.push_back(value_yaml(p.node));
        CHECK(after == before);
        CHECK(config_hash(cfg) == hash);
        CHECK(to_yaml(cfg) == yaml);
        CHECK(run_identity(cfg) == id);  // and naming it twice names it the same
    }
}

TEST_CASE("naming/every committed finished run is still its experiment's run", "[tasks][config][committed_runs]") {
    // What `relpos run` checks before it skips a finished run, for every run committed under results/: some
    // experiment that ran it (results/*/experiment.yaml, configs/**/*.yaml) has a sweep point whose run
    // directory results/<name>/runs/<id> holds it and whose config same_run() matches its recorded
    // config_hash, or is that point's run under another stop (a cap or plateau rule, amended since:
    // same_run_but_stop); in a shared run store the link's target is that point's run_identity. Configs are read with
    // LoadFlags::check_paths off: a run's name does not depend on its data's files, so the runs of a data set that
    // is not installed here (the Brown corpus in CI: make data) are checked too. An experiment that cannot be read
    // at all is left out, with a warning, and so are the unmatched runs of that task (data.task) in the run store
    // it names. Fails for an option added without omit_from_run_name_at (it renamed FIRE's finished runs once,
    // 2026-11-28, before it reached a commit).
    const fs::path root(kSrc);
    LoadFlags flags;
    flags.check_paths = false;
    std::vector<fs::path> experiments;
    for (const auto& e : fs::directory_iterator(root / "results"))
        if (fs::exists(e.path() / "experiment.yaml")) experiments.push_back(e.path() / "experiment.yaml");
    for (const auto& e : fs::recursive_directory_iterator(root / "configs"))
        if (e.path().extension() == ".yaml") experiments.push_back(e.path());
    std::set<std::string> matched, unloadable;
    // A run store's points: a run there may be one of them under another stop (a cap or plateau rule since
    // amended), which no link names any more
    std::map<std::string, std::vector<ExperimentConfig>> store_points;
    std::map<std::string, std::set<std::string>> unloadable_stores;  // store -> the data.task its unloadable experiments name
    for (const auto& x : experiments) {
        std::vector<SweepPoint> points;
        ExperimentConfig top;
        try {
            top = load_config(x.string(), {}, flags);
            points = expand_sweep(top, x.string(), {}, flags);
        } catch (const ConfigError& e) {
            unloadable.insert(x.string());
            // its runs may live in a shared run store (results/lm/runs for configs/lm_converged/): read the key alone
            try {
                const YAML::Node raw = YAML::LoadFile(x.string());
                if (raw["run_store"] && fs::path(raw["run_store"].as<std::string>()).is_relative() && raw["data"] &&
                    raw["data"]["task"])
                    unloadable_stores[fs::weakly_canonical(root / raw["run_store"].as<std::string>()).string()].insert(
                        raw["data"]["task"].as<std::string>());
            } catch (const std::exception&) {
            }
            WARN(x.string() << " not checked: " << e.what());
            continue;
        }
        if (!top.run_store.empty() && fs::path(top.run_store).is_relative())
            for (const auto& p : points) store_points[fs::weakly_canonical(root / top.run_store).string()].push_back(p.config);
        for (const auto& p : points) {
            // Where `relpos run` looks: the experiment's runs/<id>, or in a shared store <run_store>/<run_identity>
            // (its runs/<id> is then a link there, committed or not).
            const fs::path link = root / "results" / top.name / "runs" / p.id;
            std::vector<fs::path> dirs{link};
            if (!top.run_store.empty() && fs::path(top.run_store).is_relative())
                dirs.push_back(root / top.run_store / run_identity(p.config));
            for (const auto& dir : dirs) {
                if (!fs::exists(dir / "results.json")) continue;
                // read as `relpos run` reads it before it skips a run (experiments/run/store.hpp)
                const std::string recorded = read_finished_run(dir / "results.json").config_hash;
                REQUIRE(!recorded.empty());
                // an experiment.yaml older than a key's new default; or a run of the point under another stop
                if (!same_run(recorded, p.config) && !same_run_but_stop(dir, p.config)) continue;
                matched.insert(fs::canonical(dir).string());
            }
            if (!top.run_store.empty() && fs::is_symlink(link) && fs::exists(link / "results.json") &&
                matched.count(fs::canonical(link).string())) {
                INFO(x.string() << " " << p.id);
                // or the same run under another stop (experiments/run/continuation.hpp, is_equivalent)
                const fs::path target = fs::canonical(link);
                CHECK((fs::read_symlink(link).filename().string() == run_identity(p.config) ||
                       is_equivalent(target, p.config)));
            }
        }
    }
    std::size_t finished = 0;
    for (const auto& e : fs::recursive_directory_iterator(root / "results")) {
        if (e.is_symlink() || e.path().filename() != "results.json" || e.path().parent_path().parent_path().filename() != "runs")
            continue;
        ++finished;
        const std::string exp = e.path().parent_path().parent_path().parent_path().filename().string();
        if (matched.count(fs::canonical(e.path().parent_path()).string())) continue;
        if (const auto sp = store_points.find(fs::weakly_canonical(e.path().parent_path().parent_path()).string());
            sp != store_points.end() &&
            std::any_of(sp->second.begin(), sp->second.end(),
                        [&](const ExperimentConfig& c) { return same_run_but_stop(e.path().parent_path(), c); }))
            continue;
        bool skipped = false;  // its experiment could not be read here
        for (const auto& u : unloadable) skipped = skipped || fs::path(u).parent_path().filename() == exp;
        // in such a store, only a run of the task whose data is missing (another experiment's run there is checked)
        if (auto st = unloadable_stores.find(fs::weakly_canonical(e.path().parent_path().parent_path()).string());
            !skipped && st != unloadable_stores.end()) {
            const YAML::Node run_cfg = YAML::LoadFile((e.path().parent_path() / "config.yaml").string());
            skipped = run_cfg["data"] && run_cfg["data"]["task"] && st->second.count(run_cfg["data"]["task"].as<std::string>());
        }
        INFO(e.path().string());
        CHECK(skipped);
    }
    CHECK(finished > 700);
    WARN(matched.size() << " of " << finished << " committed finished runs matched through their experiments");
}

TEST_CASE("naming/a report config that trains nothing names exactly the runs of the configs it reports", "[config]") {
    // configs/lm_converged/final.yaml repeats study.yaml's data, model, schedule and evaluation (the config loader
    // has no include key) and trains nothing of its own: its runs are study.yaml's and more_encodings.yaml's, found
    // in the shared run store by run_identity. A key edited in one file and not the other would rename some of its
    // runs (they would show as unfinished and the report would lack them); here the run identities of its sweep
    // are exactly the union of the two configs' (more_encodings.yaml repeats study.yaml's sinusoidal and RoPE runs,
    // so 40 + 35 points are 65 runs), no two points of one config are one run, and the three share one run store.
    struct ReportConfig {
        const char* config;
        std::vector<const char*> sources;
    };
    const std::vector<ReportConfig> reports = {
        {"configs/lm_converged/final.yaml", {"configs/lm_converged/study.yaml", "configs/lm_converged/more_encodings.yaml"}},
    };
    LoadFlags flags;
    flags.check_paths = false;  // a run's name does not depend on its data's files (the Brown corpus: make data)
    const auto expand = [&](const std::string& rel, std::string* store) {
        const std::string path = kSrc + "/" + rel;
        const ExperimentConfig cfg = load_config(path, {}, flags);
        *store = cfg.run_store;
        std::map<std::string, std::string> by_identity;  // run_identity -> the point's id
        for (const auto& p : expand_sweep(cfg, path, {}, flags)) {
            INFO(rel << " " << p.id);
            CHECK(by_identity.emplace(run_identity(p.config), p.id).second);  // no two points one run
        }
        return by_identity;
    };
    for (const auto& r : reports) {
        INFO(r.config);
        std::string store;
        const auto reported = expand(r.config, &store);
        REQUIRE(!store.empty());
        std::map<std::string, std::string> sources;
        for (const char* s : r.sources) {
            INFO(s);
            std::string source_store;
            for (const auto& [identity, id] : expand(s, &source_store)) sources.emplace(identity, id);
            CHECK(source_store == store);
        }
        for (const auto& [identity, id] : reported) {
            INFO(id << " (" << identity << ") is a run of no source config");
            CHECK(sources.count(identity) == 1);
        }
        for (const auto& [identity, id] : sources) {
            INFO(id << " (" << identity << ") of a source config is not reported");
            CHECK(reported.count(identity) == 1);
        }
        CHECK(reported.size() == sources.size());
    }
}

TEST_CASE("naming/the comparison tables set every cell at the rate its sweep chose", "[config][committed_runs]") {
    // A comparison table lists its cells by hand (sweep.cells); the learning rate of each is the one
    // scripts/choose_lr.py chose on in-distribution validation (the sweep's lr_choice.json). The Ruoss table
    // sets a cell whose choice was not competent within 10,000 updates at the longer cap (40,000), the others
    // at 10,000; the Kazemnejad table sets every cell at their budget, 40,000 (runs that reach the target
    // sooner stop there: experiments/run/continuation.hpp, find_equivalent). A cell edited by hand, a choice
    // that changed, or a chosen cell missing from the Kazemnejad table fails here.
    const fs::path root(kSrc);
    const std::pair<const char*, const char*> tables[] = {
        {"configs/ruoss/table.yaml", "results/ruoss_lr_sweep/lr_choice.json"},
        {"configs/ruoss/table_pairs.yaml", "results/ruoss_lr_sweep/lr_choice.json"},
        {"configs/kazemnejad/table_copy_reverse.yaml", "results/kazemnejad_lr_sweep_copy_reverse/lr_choice.json"},
        {"configs/kazemnejad/table_copy_reverse_pairs.yaml", "results/kazemnejad_lr_sweep_copy_reverse/lr_choice.json"},
    };
    for (const auto& [config, lr_choice] : tables) {
        INFO(config);
        const std::string path = (root / config).string();
        const ExperimentConfig cfg = load_config(path);
        std::ifstream in(root / lr_choice);
        REQUIRE(in);
        const Json choice = parse_json_or_throw<std::runtime_error>(
            std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()), lr_choice);
        const auto points = expand_sweep(cfg, path, {});
        REQUIRE(!points.empty());
        std::set<std::string> cells;
        for (const auto& p : points) {
            INFO(p.id);
            const Json* chosen = nullptr;
            for (const auto& c : choice["chosen"])
                if (c["task"] == p.labels.at("data.task") && c["position"] == p.labels.at("model.position")) chosen = &c;
            REQUIRE(chosen != nullptr);
            CHECK(p.labels.at("train.lr") == (*chosen)["lr"].get<std::string>());
            const bool every_cell_long = std::string(config).find("kazemnejad") != std::string::npos;
            CHECK(p.config.train.max_steps == (every_cell_long || !(*chosen)["reached"].get<bool>() ? 40000 : 10000));
            cells.insert(p.labels.at("data.task") + " " + p.labels.at("model.position"));
        }
        // the Ruoss table holds only the cells whose seeds are trained; the Kazemnejad table every chosen cell
        if (std::string(config).find("kazemnejad") != std::string::npos)
            CHECK(cells.size() == choice["chosen"].size());
    }
}

TEST_CASE("store/a finished run's training cost in core-seconds: its CPU time, else wall time x threads x ranks",
          "[store]") {
    // what `relpos run --list` sums for "core-hours of training left"
    const fs::path dir = fs::temp_directory_path() / ("relpos-core-seconds-" + std::to_string(getpid()));
    fs::create_directories(dir);
    auto cost = [&](const std::string& json) {
        std::ofstream(dir / "results.json") << json;
        return read_finished_run(dir / "results.json").core_seconds();
    };
    CHECK(cost(R"({"train_seconds": 3600, "threads": 2})") == 7200);
    CHECK(cost(R"({"train_seconds": 3600, "threads": 1, "ranks": 4})") == 14400);
    CHECK(cost(R"({"train_seconds": 3600, "threads": 2, "train_cpu_seconds": 5000.5})") == 5000.5);
    CHECK(cost(R"({"train_seconds": 100})") == 100);  // a run of an older version: no thread count recorded
    fs::remove_all(dir);
}

TEST_CASE("record/one reader of results.json: the runner's and the report's fields, a mistyped key named",
          "[store][report]") {
    const fs::path dir = fs::temp_directory_path() / ("relpos-record-" + std::to_string(getpid()));
    fs::create_directories(dir);
    const fs::path file = dir / "results.json";
    std::ofstream(file) << R"({"id": "seed=2", "labels": {"seed": "2"}, "metrics": {"val.ppl@64": 80.5, "test.bleu": null},
        "config_hash": "abc", "commit": "c0ffee", "machine": "m", "trained_on": ["m", "n"], "finished": "2026-11-29T01:00:00",
        "stop_reason": "plateau", "train_seconds": 3600, "train_cpu_seconds": 3500.5, "steps": 12000, "parameters": 900000,
        "epochs_completed": 34, "best_step": 9000, "threads": 1, "ranks": 2,
        "competence": {"metric": "val.accuracy", "target": 99, "reached": true}})";
    const RunRecord r = read_run_record(file);
    CHECK(r.id == "seed=2");
    CHECK(r.labels.at("seed") == "2");
    CHECK(r.metrics.size() == 1);  // the null (a non-finite figure) left out
    CHECK(r.metrics.at("val.ppl@64") == 80.5);
    CHECK(r.config_hash == "abc");
    CHECK(r.trained_on == std::vector<std::string>{"m", "n"});
    CHECK(r.stop_reason == "plateau");
    CHECK(r.steps == 12000);
    CHECK(r.parameters == 900000);
    CHECK(r.epochs == 34);
    CHECK(r.best_step == 9000);
    CHECK(r.threads == 1);
    CHECK(r.ranks == 2);
    CHECK(r.train_cpu_seconds == 3500.5);
    CHECK(r.competent == 1);
    CHECK(r.competence == "val.accuracy >= 99");
    // the runner's read is the same record
    CHECK(read_finished_run(file).best_step == 9000);

    // absent keys keep their defaults (older versions recorded fewer)
    std::ofstream(file) << R"({"id": "x"})";
    const RunRecord old = read_run_record(file);
    CHECK(old.threads == -1);
    CHECK(old.ranks == 1);
    CHECK(old.train_cpu_seconds == -1);
    CHECK(old.competent == -1);

    // a key of the wrong type: the strict read names the file and the key; the runner's read gives a record
    // that matches no config, and says why
    for (const auto& [text, key] : std::vector<std::pair<std::string, std::string>>{
             {R"({"id": "x", "steps": 1.5})", "\"steps\""},
             {R"({"id": "x", "threads": "one"})", "\"threads\""},
             {R"({"id": "x", "labels": {"seed": 2}})", "\"labels.seed\""},
             {R"({"id": "x", "config_hash": 7})", "\"config_hash\""},
             {R"([1, 2])", "not a finished run's results"},
             {R"({"id": )", "not valid JSON"}}) {
        INFO(text);
        std::ofstream(file) << text;
        CHECK_THROWS_WITH(read_run_record(file), Catch::Contains(file.string()) && Catch::Contains(key));
        std::string why;
        CHECK(read_finished_run(file, &why).config_hash.empty());
        CHECK_THAT(why, Catch::Contains(key));
    }
    fs::remove_all(dir);
}

TEST_CASE("record/every committed results.json reads as a finished run, with an id and a config hash", "[store][committed_runs]") {
    const fs::path root = RELPOS_SOURCE_DIR;
    std::size_t n = 0;
    for (auto it = fs::recursive_directory_iterator(root / "results"); it != fs::recursive_directory_iterator(); ++it) {
        if (it->is_symlink()) {
            it.disable_recursion_pending();  // a shared store's links: the runs are read where they are
            continue;
        }
        if (it->path().filename() != "results.json") continue;
        INFO(it->path().string());
        const RunRecord r = read_run_record(it->path());
        CHECK(!r.id.empty());
        CHECK(!r.config_hash.empty());
        CHECK(r.steps > 0);
        ++n;
    }
    CHECK(n > 900);
}
