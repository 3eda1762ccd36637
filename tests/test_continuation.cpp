// Continuing a run under a later stop (experiments/run/continuation.hpp): a larger train.max_steps, a plateau
// rule that stops later or never; from a capped, a plateau-stopped or an interrupted run. The continued run
// must be the run trained under its own stop from step 0, number for number.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include <yaml-cpp/yaml.h>

#include "experiments/config/config.hpp"
#include "experiments/run/continuation.hpp"
#include "experiments/run/identity.hpp"
#include "experiments/run/store.hpp"
#include "tests/cli_helpers.hpp"
#include "tests/helpers.hpp"

using relpos::test::sh;
namespace fs = std::filesystem;

namespace {

fs::path scratch(const std::string& name) {
    const fs::path d = fs::temp_directory_path() / ("relpos-continuation-" + name + "-" + std::to_string(getpid()));
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
}

// Randomized positions (drawn from the dropout stream), dropout, a plateau count and a competence target no
// model reaches: every piece of state a continuation must carry is in play.
std::string run(const fs::path& dir, const std::string& store, long max_steps, const std::string& extra = "",
                long patience = 40) {
    return "cd '" + std::string(RELPOS_SOURCE_DIR) + "' && " + relpos::test::kRelposBin +
           " run tests/fixtures/tiny_encoder_only.yaml results_dir=" + dir.string() + " name=s" + std::to_string(max_steps) +
           " run_store=" + store + " 'model.position={type: rope, randomized: 32, randomized_eval: sample}'" +
           " model.dropout=0.1 train.epochs=20 train.eval_every=4 train.max_steps=" + std::to_string(max_steps) +
           " train.stop.patience=" + std::to_string(patience) + " train.stop.target_metric=accuracy train.stop.target=100 " +
           extra;
}

fs::path the_run(const fs::path& dir, long max_steps) {
    return fs::canonical(dir / ("s" + std::to_string(max_steps)) / "runs" / "seed=3");
}

// metrics.jsonl without the wall-clock field
std::vector<std::string> curve(const fs::path& run) {
    std::vector<std::string> out;
    std::ifstream f(run / "metrics.jsonl");
    for (std::string line; std::getline(f, line);) {
        const auto at = line.find(", \"elapsed\"");
        out.push_back(at == std::string::npos ? line : line.substr(0, at));
    }
    return out;
}

}  // namespace

TEST_CASE("continuation/a capped run continued to a larger cap is the run trained to it", "[e2e][continuation]") {
    const fs::path d = scratch("same");
    const std::string store = (d / "store").string(), ref_store = (d / "ref_store").string();
    auto a = sh(run(d, store, 24) + " --quiet");
    INFO(a.out);
    REQUIRE(a.code == 0);
    const fs::path capped = the_run(d, 24);
    const YAML::Node ra = YAML::LoadFile((capped / "results.json").string());
    REQUIRE(ra["stop_reason"].as<std::string>() == "max_steps");
    CHECK(fs::is_directory(capped / "checkpoints" / "last" / "optim"));  // kept for the continuation

    // --list says beforehand which point will continue it, and from which update
    auto listed = sh(run(d, store, 48) + " --list");
    INFO(listed.out);
    REQUIRE(listed.code == 0);
    CHECK(listed.out.find("[continues " + capped.filename().string() + ", capped at step 24]") != std::string::npos);

    auto b = sh(run(d, store, 48));
    INFO(b.out);
    REQUIRE(b.code == 0);
    CHECK(b.out.find("continues") != std::string::npos);
    const fs::path longer = the_run(d, 48);
    CHECK(longer != capped);
    auto c = sh(run(d, ref_store, 48) + " results_dir=" + (d / "ref").string() + " --quiet");
    REQUIRE(c.code == 0);
    const fs::path ref = the_run(d / "ref", 48);
    const auto cb = curve(longer), cr = curve(ref);
    CHECK(cb.size() > curve(capped).size());
    CHECK(cb == cr);
    const YAML::Node rb = YAML::LoadFile((longer / "results.json").string()),
                     rr = YAML::LoadFile((ref / "results.json").string());
    CHECK(rb["continued_from"]["step"].as<int>() == 24);
    CHECK(rb["continued_from"]["run"].as<std::string>() == capped.filename().string());
    CHECK(rb["continued_from"]["stop"].as<std::string>() == "max_steps");
    CHECK_FALSE(rr["continued_from"].IsDefined());
    CHECK(rb["steps"].as<int>() == rr["steps"].as<int>());
    CHECK(rb["best_step"].as<int>() == rr["best_step"].as<int>());
    for (auto it : rr["metrics"])
        CHECK(rb["metrics"][it.first.as<std::string>()].as<std::string>() == it.second.as<std::string>());
    // the capped run is untouched
    CHECK(YAML::LoadFile((capped / "results.json").string())["steps"].as<int>() == 24);
    fs::remove_all(d);
}

TEST_CASE("continuation/only where the longer run would have done the same", "[e2e][continuation]") {
    const fs::path d = scratch("refused");
    const std::string store = (d / "store").string();
    SECTION("a cap that is not a validation step of the longer run") {
        REQUIRE(sh(run(d, store, 22) + " --quiet").code == 0);
        auto b = sh(run(d, store, 48));
        REQUIRE(b.code == 0);
        CHECK(b.out.find("continues") == std::string::npos);
        CHECK(b.out.find("starts from step 0, not continuing") != std::string::npos);
        CHECK(b.out.find("(capped at step 22): its last step is not a multiple of train.eval_every = 4") !=
              std::string::npos);
    }
    SECTION("a capped run without its optimiser state (finished before continuations existed)") {
        REQUIRE(sh(run(d, store, 24) + " --quiet").code == 0);
        fs::remove_all(the_run(d, 24) / "checkpoints" / "last" / "optim");
        auto b = sh(run(d, store, 48));
        REQUIRE(b.code == 0);
        CHECK(b.out.find("continues") == std::string::npos);
        CHECK(b.out.find("(capped at step 24): it kept no last checkpoint with optimiser state") != std::string::npos);
    }
    SECTION("another thread count") {
        REQUIRE(sh(run(d, store, 24) + " --quiet").code == 0);
        auto listed = sh(run(d, store, 48, "threads=2") + " --list");  // says so beforehand
        CHECK(listed.out.find("[from update 0, not continuing ") != std::string::npos);
        CHECK(listed.out.find("[continues ") == std::string::npos);
        auto b = sh(run(d, store, 48, "threads=2"));
        REQUIRE(b.code == 0);
        CHECK(b.out.find("continues") == std::string::npos);
        CHECK(b.out.find("it trained on 1 thread(s) and 1 rank(s), this run on 2 and 1") != std::string::npos);
    }
    SECTION("a run that stopped before its cap is not continued (it is finished)") {
        REQUIRE(sh(run(d, store, 24, "train.stop.target=0") + " --quiet").code == 0);
        auto b = sh(run(d, store, 48, "train.stop.target=0"));
        REQUIRE(b.code == 0);
        CHECK(b.out.find("continues") == std::string::npos);
        CHECK(b.out.find("not continuing") == std::string::npos);  // nothing to explain: it finished
        CHECK_FALSE(fs::exists(the_run(d, 24) / "checkpoints" / "last" / "optim"));
    }
    fs::remove_all(d);
}

// The equality a continuation promises, for a continued run and a run of its config from step 0.
static void check_same_run(const fs::path& continued, const fs::path& ref) {
    CHECK(curve(continued) == curve(ref));
    const YAML::Node rc = YAML::LoadFile((continued / "results.json").string()),
                     rr = YAML::LoadFile((ref / "results.json").string());
    CHECK(rc["steps"].as<int>() == rr["steps"].as<int>());
    CHECK(rc["best_step"].as<int>() == rr["best_step"].as<int>());
    CHECK(rc["stop_reason"].as<std::string>() == rr["stop_reason"].as<std::string>());
    for (auto it : rr["metrics"])
        CHECK(rc["metrics"][it.first.as<std::string>()].as<std::string>() == it.second.as<std::string>());
}

TEST_CASE("continuation/a run stopped on its plateau, or interrupted, continues under a later stop", "[e2e][continuation]") {
    // train.stop.min_delta=100: no validation after the first improves enough, so patience 2 stops the run at
    // update 12 (validations at 4, 8, 12); patience 0 trains to the cap.
    const fs::path d = scratch("plateau");
    const std::string store = (d / "store").string(), ref_store = (d / "ref_store").string();
    const std::string md = "train.stop.min_delta=100";
    REQUIRE(sh(run(d / "ref", ref_store, 48, md, 0) + " --quiet").code == 0);
    const fs::path ref = the_run(d / "ref", 48);
    REQUIRE(YAML::LoadFile((ref / "results.json").string())["steps"].as<int>() == 48);
    // trains `name` (patience 0, cap 48) in the store, which must continue a run the log line `said` names, and
    // be the reference run number for number; results.json records where it continued from
    const auto continued_is_ref = [&](const std::string& name, const std::string& said, const std::string& how,
                                      int step) {
        auto b = sh(run(d / name, store, 48, md, 0));
        INFO(b.out);
        REQUIRE(b.code == 0);
        CHECK(b.out.find("continues") != std::string::npos);
        CHECK(b.out.find(said) != std::string::npos);
        const fs::path continued = the_run(d / name, 48);
        check_same_run(continued, ref);
        const YAML::Node rc = YAML::LoadFile((continued / "results.json").string());
        CHECK(rc["continued_from"]["stop"].as<std::string>() == how);
        CHECK(rc["continued_from"]["step"].as<int>() == step);
    };

    SECTION("stopped on its plateau") {
        REQUIRE(sh(run(d / "a", store, 48, md, 2) + " --quiet").code == 0);
        const fs::path plateaued = the_run(d / "a", 48);
        const YAML::Node ra = YAML::LoadFile((plateaued / "results.json").string());
        REQUIRE(ra["stop_reason"].as<std::string>() == "plateau");
        REQUIRE(ra["steps"].as<int>() == 12);
        CHECK(fs::is_directory(plateaued / "checkpoints" / "last" / "optim"));  // kept for a continuation

        // a smaller patience could have stopped earlier: not continued, and said why
        auto smaller = sh(run(d / "c", store, 48, md, 1));
        INFO(smaller.out);
        REQUIRE(smaller.code == 0);
        CHECK(smaller.out.find("(stopped on its plateau at step 12): its train.stop.patience is 2, this run's 1") !=
              std::string::npos);

        auto listed = sh(run(d / "b", store, 48, md, 0) + " --list");
        INFO(listed.out);
        CHECK(listed.out.find("[continues " + plateaued.filename().string() + ", stopped on its plateau at step 12]") !=
              std::string::npos);
        continued_is_ref("b", "stopped on its plateau at step 12", "plateau", 12);
    }
    SECTION("interrupted") {
        // a run of patience 40 capped at 24 without its results.json: an interrupted run with its checkpoint at 24
        REQUIRE(sh(run(d / "i24", store, 24, md, 40) + " --quiet").code == 0);
        const fs::path source = the_run(d / "i24", 24);
        fs::remove(source / "results.json");
        {
            const relpos::RunLock training(source);  // another process trains it: not copied meanwhile
            REQUIRE(training.held());
            auto busy = sh(run(d / "i48", store, 48, md, 0));
            INFO(busy.out);
            REQUIRE(busy.code == 0);
            CHECK(busy.out.find("is training now; skipped here") != std::string::npos);
        }
        continued_is_ref("i48", "interrupted at step 24", "interrupted", 24);
    }
    fs::remove_all(d);
}

TEST_CASE("continuation/a run that stopped before either cap is the run of both caps", "[e2e][continuation]") {
    // train.stop.target=0: every run reaches its target at its first validation, update 4. The run of cap 24 is
    // then, update for update, the run of cap 48 (nothing in training reads the cap but the stop): the cap-48
    // point is that run, listed finished, linked to it and not trained; a cap at or below update 4 is not.
    const fs::path d = scratch("equivalent");
    const std::string store = (d / "store").string();
    REQUIRE(sh(run(d, store, 24, "train.stop.target=0") + " --quiet").code == 0);
    const fs::path first = the_run(d, 24);
    REQUIRE(YAML::LoadFile((first / "results.json").string())["stop_reason"].as<std::string>() == "target");
    REQUIRE(YAML::LoadFile((first / "results.json").string())["steps"].as<int>() == 4);
    const auto runs_in_store = [&] {
        std::size_t n = 0;
        for (const auto& e : fs::directory_iterator(store)) n += fs::exists(e.path() / "results.json");
        return n;
    };

    auto listed = sh(run(d, store, 48, "train.stop.target=0") + " --list");
    INFO(listed.out);
    REQUIRE(listed.code == 0);
    CHECK(listed.out.find("[finished: the same run under another stop, stopped at its target at update 4]") !=
          std::string::npos);
    CHECK(listed.out.find("-> " + (fs::path(store) / first.filename()).string()) != std::string::npos);

    auto b = sh(run(d, store, 48, "train.stop.target=0"));
    INFO(b.out);
    REQUIRE(b.code == 0);
    CHECK(b.out.find("finished earlier as " + first.filename().string() + " under another stop") != std::string::npos);
    CHECK(b.out.find("parameters") == std::string::npos);  // no model was built to train
    CHECK(the_run(d, 48) == first);
    CHECK(runs_in_store() == 1);
    // a report of the larger cap reads it
    CHECK(sh("cd '" + std::string(RELPOS_SOURCE_DIR) + "' && " + relpos::test::kRelposBin + " report " +
             (d / "s48").string()).code == 0);

    // the other way round too: a smaller cap above the stop
    REQUIRE(sh(run(d, store, 8, "train.stop.target=0") + " --quiet").code == 0);
    CHECK(the_run(d, 8) == first);
    CHECK(runs_in_store() == 1);

    // a cap at the stop's update is a run of its own (its last validation is its cap's)
    REQUIRE(sh(run(d, store, 4, "train.stop.target=0") + " --quiet").code == 0);
    CHECK(the_run(d, 4) != first);
    CHECK(runs_in_store() == 2);

    // with no plateau rule, or a more patient one, the run that reached its target is the same run; a less
    // patient rule could have stopped it earlier, and trains its own
    REQUIRE(sh(run(d / "p0", store, 48, "train.stop.target=0", 0) + " --quiet").code == 0);
    CHECK(the_run(d / "p0", 48) == first);
    REQUIRE(sh(run(d / "p80", store, 48, "train.stop.target=0", 80) + " --quiet").code == 0);
    CHECK(the_run(d / "p80", 48) == first);
    CHECK(runs_in_store() == 2);
    REQUIRE(sh(run(d / "p1", store, 48, "train.stop.target=0", 1) + " --quiet").code == 0);
    CHECK(the_run(d / "p1", 48) != first);
    CHECK(runs_in_store() == 3);

    // another config is never equivalent: a different seed trains
    REQUIRE(sh(run(d, store, 48, "train.stop.target=0 seed=4") + " --quiet").code == 0);
    CHECK(runs_in_store() == 4);

    // Without a run store: the run in the experiment's own runs/<id>, finished under cap 24, is the cap-48
    // point's run (skipped, said so); another config there is still refused, never overwritten.
    {
        const auto own = [&](long cap, const std::string& extra) {
            return "cd '" + std::string(RELPOS_SOURCE_DIR) + "' && " + relpos::test::kRelposBin +
                   " run tests/fixtures/tiny_encoder_only.yaml results_dir=" + d.string() + " name=in_place" +
                   " 'model.position={type: rope, randomized: 32, randomized_eval: sample}' model.dropout=0.1" +
                   " train.epochs=20 train.eval_every=4 train.stop.patience=40 train.stop.target_metric=accuracy" +
                   " train.stop.target=0 train.max_steps=" + std::to_string(cap) + " " + extra;
        };
        const fs::path in_place = d / "in_place" / "runs" / "seed=3";
        REQUIRE(sh(own(24, "--quiet")).code == 0);
        REQUIRE(fs::exists(in_place / "results.json"));
        const std::string before = curve(in_place).front();
        auto listed = sh(own(48, "--list"));
        INFO(listed.out);
        CHECK(listed.out.find("[finished: the same run under another stop, stopped at its target at update 4]") !=
              std::string::npos);
        auto again = sh(own(48, ""));
        INFO(again.out);
        REQUIRE(again.code == 0);
        CHECK(again.out.find("finished earlier as seed=3 under another stop") != std::string::npos);
        CHECK(again.out.find("parameters") == std::string::npos);
        auto other = sh(own(48, "train.lr=0.3"));
        INFO(other.out);
        CHECK(other.code == 2);
        CHECK(other.out.find("already finished with a different configuration") != std::string::npos);
        CHECK(curve(in_place).front() == before);
    }

    // The index a whole experiment uses (the store read once) finds what a look at every run finds.
    const relpos::EquivalentIndex index(store);
    for (const long cap : {4L, 8L, 24L, 48L, 96L})
        for (const long patience : {0L, 1L, 40L, 80L})
        for (const char* seed : {"seed=3", "seed=4", "seed=5"}) {
            const relpos::ExperimentConfig cfg = relpos::load_config(
                "tests/fixtures/tiny_encoder_only.yaml",  // as the runs above were given it, from the source root
                {"model.position={type: rope, randomized: 32, randomized_eval: sample}", "model.dropout=0.1",
                 "train.epochs=20", "train.eval_every=4", "train.max_steps=" + std::to_string(cap),
                 "train.stop.patience=" + std::to_string(patience), "train.stop.target_metric=accuracy",
                 "train.stop.target=0", seed});
            const fs::path own = fs::path(store) / relpos::run_identity(cfg);
            std::vector<fs::path> every;
            for (const auto& e : fs::directory_iterator(store))
                if (e.path().filename() != own.filename() && relpos::is_equivalent(e.path(), cfg)) every.push_back(e.path());
            const auto found = index.find(cfg, own);
            INFO("cap " << cap << " patience " << patience << " " << seed);
            CHECK(found.has_value() == !every.empty());
            if (found) CHECK(std::find(every.begin(), every.end(), *found) != every.end());
            if (std::string(seed) == "seed=3" && cap > 4 && patience != 1)  // the run that stopped at 4
                CHECK(found.has_value());
            if (std::string(seed) == "seed=5") CHECK(!found.has_value());
        }
    fs::remove_all(d);
}
