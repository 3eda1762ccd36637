// Training, checkpoints, decoding and the relpos CLI end to end on tiny synthetic runs. (Reports:
// test_report.cpp.)
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>

#include "tests/cli_helpers.hpp"
#include <fstream>
#include <thread>

#include <yaml-cpp/yaml.h>

#include "experiments/train/checkpoint.hpp"
#include "experiments/data/corpus.hpp"
#include "experiments/data/json.hpp"
#include "experiments/eval/decode.hpp"
#include "experiments/eval/significance.hpp"
#include "experiments/tasks/task.hpp"
#include "experiments/train/trainer.hpp"
#include "tests/nn_helpers.hpp"

using namespace relpos;
namespace fs = std::filesystem;

namespace {

const std::string kBin = std::string(RELPOS_BINARY_DIR) + "/relpos";
const std::string kTiny = std::string(RELPOS_SOURCE_DIR) + "/tests/fixtures/tiny_copy.yaml";

using relpos::test::Cmd;
using relpos::test::sh;

std::string fresh_dir(const std::string& name) {
    const fs::path d = fs::temp_directory_path() / ("relpos-test-" + name + "-" + std::to_string(getpid()));
    fs::remove_all(d);
    fs::create_directories(d);
    return d.string();
}

// The command line that runs the tiny copy fixture into `dir` from the source tree, `extra` (overrides
// and options) appended; callers add more options after it.
std::string tiny_run(const std::string& dir, const std::string& extra) {
    return "cd '" + std::string(RELPOS_SOURCE_DIR) + "' && " + test::kRelposBin + " run tests/fixtures/tiny_copy.yaml results_dir=" +
           dir + " " + extra + " ";
}

std::string slurp(const fs::path& p) {
    std::ifstream f(p);
    return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

// The loss fields of metrics.jsonl (timings stripped).
std::vector<std::string> loss_curve(const fs::path& metrics) {
    std::vector<std::string> out;
    std::ifstream f(metrics);
    std::string line;
    while (std::getline(f, line)) {
        YAML::Node j = YAML::Load(line);
        std::string s = "step " + j["step"].as<std::string>();
        for (const char* k : {"train_loss", "grad_norm", "valid_loss", "valid_accuracy"})
            if (j[k]) s += std::string(" ") + k + " " + j[k].as<std::string>();
        out.push_back(s);
    }
    return out;
}

YAML::Node metrics_of(const fs::path& run) { return YAML::LoadFile((run / "results.json").string())["metrics"]; }

}  // namespace

TEST_CASE("e2e/Shaw with neither term trains exactly as no position information", "[e2e]") {
    // Why the run store shares them (run_identity): the same losses, validations and hypotheses.
    const std::string dir = fresh_dir("neither");
    std::vector<std::vector<std::string>> curves;
    std::vector<std::string> hyps;
    for (const std::string pos : {"{type: none}", "{type: shaw, k: 2, keys: false, values: false}"}) {
        const std::string out = dir + "/" + std::to_string(curves.size());
        auto r = sh(kBin + " run " + kTiny + " results_dir=" + out + " 'model.position=" + pos + "' --quiet");
        INFO(r.out);
        REQUIRE(r.code == 0);
        const fs::path run = fs::path(out) / "tiny_copy" / "runs";
        REQUIRE(fs::exists(run));
        const fs::path one = fs::directory_iterator(run)->path();
        curves.push_back(loss_curve(one / "metrics.jsonl"));
        hyps.push_back(slurp(one / "hyp.test.txt"));
    }
    REQUIRE(curves[0].size() > 5);
    CHECK(curves[0] == curves[1]);
    CHECK(hyps[0] == hyps[1]);
    // In a run store the no-position run, once finished, is the neither-term point's run: skipped, not redone.
    const std::string store = " run_store=" + dir + "/store --quiet";
    auto first = sh(kBin + " run " + kTiny + " results_dir=" + dir + "/a 'model.position={type: none}'" + store);
    REQUIRE(first.code == 0);
    auto second = sh(kBin + " run " + kTiny + " results_dir=" + dir + "/b 'model.position={type: shaw, k: 2, keys: false, values: false}'" + store);
    INFO(second.out);
    CHECK(second.code == 0);
    CHECK_THAT(second.out, Catch::Contains("finished earlier, skipped"));
    fs::remove_all(dir);
}

TEST_CASE("e2e/tiny_run_writes_a_complete_run_directory", "[e2e]") {
    const std::string dir = fresh_dir("e2e");
    auto r = sh(kBin + " run " + kTiny + " results_dir=" + dir + " --quiet");
    INFO(r.out);
    REQUIRE(r.code == 0);
    const fs::path run = fs::path(dir) / "tiny_copy" / "runs" / "seed=3";
    for (const char* f : {"config.yaml", "metrics.jsonl", "results.json", "hyp.val.txt", "hyp.test.txt", "log.txt",
                          "attention.tsv", "checkpoints/best/state.json", "checkpoints/best/manifest.json",
                          "checkpoints/last/params/src_embed.weight.npy"})
        CHECK(fs::exists(run / f));
    auto m = metrics_of(run);
    CHECK(m["test.loss"].as<double>() > 0.0);
    // 40 hypotheses, one per line, and val.accuracy is their exact-match rate against the task's
    // references (recomputed here from the files, not just "some non-negative number")
    std::ifstream h(run / "hyp.val.txt");
    std::vector<std::string> hyps;
    for (std::string l; std::getline(h, l);) hyps.push_back(l);
    CHECK(hyps.size() == 40);
    const Dataset data = load_dataset(load_config(kTiny), dir);
    const auto& refs = data.splits.at("val").refs;
    REQUIRE(refs.size() == hyps.size());
    std::size_t exact = 0;
    for (std::size_t i = 0; i < hyps.size(); ++i) exact += hyps[i] == refs[i];
    CHECK(m["val.accuracy"].as<double>() == Approx(100.0 * double(exact) / double(hyps.size())));
    // a finished run is skipped, untouched, and so is the experiment's experiment.yaml (commit line included)
    const auto before = fs::last_write_time(run / "results.json");
    const std::string exp_yaml = slurp(fs::path(dir) / "tiny_copy/experiment.yaml");
    const auto exp_time = fs::last_write_time(fs::path(dir) / "tiny_copy/experiment.yaml");
    auto again = sh(kBin + " run " + kTiny + " results_dir=" + dir + " --quiet");
    CHECK(again.code == 0);
    CHECK_THAT(again.out, Catch::Contains("skipped"));
    CHECK(fs::last_write_time(run / "results.json") == before);
    CHECK(slurp(fs::path(dir) / "tiny_copy/experiment.yaml") == exp_yaml);
    CHECK(fs::last_write_time(fs::path(dir) / "tiny_copy/experiment.yaml") == exp_time);
    // the log names the thread count in the singular, and warns that the default-length warmup of the
    // fixture (20) fits; a warmup longer than the run is warned about
    CHECK_THAT(slurp(run / "log.txt"), Catch::Contains("1 thread;") || Catch::Contains("1 thread\n"));
    CHECK_THAT(slurp(run / "log.txt"), !Catch::Contains("warning: train.warmup"));
    // ...and a different config under the same run id is refused, exit 2
    auto clash = sh(kBin + " run " + kTiny + " results_dir=" + dir + " train.epochs=2 --quiet");
    CHECK(clash.code == 2);
    CHECK_THAT(clash.out, Catch::Contains("different configuration"));
    // report from the finished run
    auto rep = sh(kBin + " report " + dir + "/tiny_copy");
    INFO(rep.out);
    CHECK(rep.code == 0);
    CHECK(fs::exists(fs::path(dir) / "tiny_copy" / "report.md"));
    CHECK_THAT(rep.out, Catch::Contains("val.accuracy"));
    // eval and translate on the trained run
    auto tr = sh("echo '4 5 6 7' | " + kBin + " translate --run " + run.string());
    CHECK(tr.code == 0);
    fs::remove_all(dir);
}

TEST_CASE("training/same_seed_same_loss_curve", "[training][determinism]") {
    const std::string a = fresh_dir("det-a"), b = fresh_dir("det-b");
    REQUIRE(sh(kBin + " run " + kTiny + " results_dir=" + a + " --quiet").code == 0);
    REQUIRE(sh(kBin + " run " + kTiny + " results_dir=" + b + " --quiet").code == 0);
    const fs::path ra = fs::path(a) / "tiny_copy/runs/seed=3", rb = fs::path(b) / "tiny_copy/runs/seed=3";
    auto ca = loss_curve(ra / "metrics.jsonl"), cb = loss_curve(rb / "metrics.jsonl");
    REQUIRE(ca.size() > 10);
    REQUIRE(ca == cb);
    CHECK(slurp(ra / "hyp.test.txt") == slurp(rb / "hyp.test.txt"));
    // a different seed gives a different curve (the test can fail)
    const std::string c = fresh_dir("det-c");
    REQUIRE(sh(kBin + " run " + kTiny + " results_dir=" + c + " seed=4 --quiet").code == 0);
    CHECK(loss_curve(fs::path(c) / "tiny_copy/runs/seed=4/metrics.jsonl") != ca);
    fs::remove_all(a), fs::remove_all(b), fs::remove_all(c);
}

// Every number a run writes (metrics.jsonl without timings, results.json metrics, hypotheses).
std::string run_numbers(const fs::path& run) {
    std::string out;
    for (auto& l : loss_curve(run / "metrics.jsonl")) out += l + "\n";
    for (auto it : metrics_of(run)) out += it.first.as<std::string>() + " " + it.second.as<std::string>() + "\n";
    for (const char* h : {"hyp.val.txt", "hyp.test.txt"}) out += slurp(run / h);
    return out;
}

TEST_CASE("training/jobs_do_not_change_the_numbers", "[training][determinism][jobs]") {
    // Two side-by-side runs with two threads each (threads=4 --jobs 2) must give exactly what each run
    // gives alone with two threads (threads=2 --jobs 1): every calling thread owns its pool, so the two
    // runs never share workers. With a single shared job slot the curves differed or the run hung.
    const std::string one = fresh_dir("jobs-1"), two = fresh_dir("jobs-2");
    const std::string common = " sweep.seeds=[1,2] model.d_model=64 model.d_ff=128 train.batch_tokens=400 --quiet";
    auto a = sh(kBin + " run " + kTiny + " results_dir=" + one + " threads=2 --jobs 1" + common);
    INFO(a.out);
    REQUIRE(a.code == 0);
    auto b = sh("timeout 300 " + kBin + " run " + kTiny + " results_dir=" + two + " threads=4 --jobs 2" + common);
    INFO(b.out);
    REQUIRE(b.code == 0);
    for (const char* id : {"seed=1", "seed=2"}) {
        const fs::path ra = fs::path(one) / "tiny_copy/runs" / id, rb = fs::path(two) / "tiny_copy/runs" / id;
        const std::string na = run_numbers(ra), nb = run_numbers(rb);
        REQUIRE(na.size() > 200);
        CHECK(na == nb);
        CHECK(YAML::LoadFile((rb / "results.json").string())["threads"].as<int>() == 2);
    }
    fs::remove_all(one), fs::remove_all(two);
}

TEST_CASE("run_store/a_point_two_experiments_ask_for_is_trained_once", "[e2e][run_store]") {
    const std::string dir = fresh_dir("store");
    const std::string store = dir + "/store";
    auto a = sh(kBin + " run " + kTiny + " results_dir=" + dir + " name=first run_store=" + store + " --quiet");
    INFO(a.out);
    REQUIRE(a.code == 0);
    const fs::path link_a = fs::path(dir) / "first/runs/seed=3";
    REQUIRE(fs::is_symlink(link_a));
    REQUIRE(fs::exists(link_a / "results.json"));
    const fs::path shared = fs::canonical(link_a);
    CHECK(shared.parent_path() == fs::canonical(store));
    // another experiment asking for the same resolved config and seed: linked, skipped, not retrained
    auto b = sh(kBin + " run " + kTiny + " results_dir=" + dir + " name=second run_store=" + store);
    INFO(b.out);
    REQUIRE(b.code == 0);
    CHECK_THAT(b.out, Catch::Contains("finished earlier, skipped"));
    CHECK(fs::canonical(fs::path(dir) / "second/runs/seed=3") == shared);
    auto rep = sh(kBin + " report " + dir + "/second");
    CHECK(rep.code == 0);
    // the link checked out or copied as a plain file holding its target (git with core.symlinks=false, a
    // copy that keeps no links): the report still reads the run (it was silently left out of the table),
    // and `relpos run` turns the file back into the link instead of refusing it
    {
        const fs::path link_b = fs::path(dir) / "second/runs/seed=3";
        const std::string text = fs::read_symlink(link_b).string();
        const std::string table = slurp(fs::path(dir) / "second/report.md");
        fs::remove(link_b);
        std::ofstream(link_b, std::ios::binary) << text;
        fs::remove(fs::path(dir) / "second/report.md");
        auto as_text = sh(kBin + " report " + dir + "/second");
        INFO(as_text.out);
        REQUIRE(as_text.code == 0);
        CHECK_THAT(as_text.out, Catch::Contains("1 run link(s) are plain files holding their target's path"));
        auto strip_date = [](std::string s) { return s.substr(0, s.find("Code: commit")); };
        CHECK(strip_date(slurp(fs::path(dir) / "second/report.md")) == strip_date(table));
        auto again = sh(kBin + " run " + kTiny + " results_dir=" + dir + " name=second run_store=" + store);
        INFO(again.out);
        REQUIRE(again.code == 0);
        CHECK(fs::is_symlink(link_b));
        CHECK(fs::canonical(link_b) == shared);
        // a plain file holding anything else is the user's and is never replaced
        fs::remove(link_b);
        std::ofstream(link_b, std::ios::binary) << text << "x";
        auto other = sh(kBin + " run " + kTiny + " results_dir=" + dir + " name=second run_store=" + store);
        CHECK(other.code == 2);
        CHECK_THAT(other.out, Catch::Contains("is not a link to the shared run"));
        CHECK(slurp(link_b) == text + "x");
        fs::remove(link_b);
        fs::create_directory_symlink(text, link_b);
    }
    // a link to another run: to one that never started (nothing to lose), or to an unfinished run of the store (a
    // config changed since it started), it is relinked; to a finished one, or out of the store, it is the user's
    // and refused
    {
        const fs::path link_b = fs::path(dir) / "second/runs/seed=3";
        const fs::path never = fs::path(store) / "never_started";
        fs::create_directories(never);
        fs::remove(link_b);
        fs::create_directory_symlink("../../store/never_started", link_b);
        auto relinked = sh(kBin + " run " + kTiny + " results_dir=" + dir + " name=second run_store=" + store);
        INFO(relinked.out);
        REQUIRE(relinked.code == 0);
        CHECK(fs::canonical(link_b) == shared);
        std::ofstream(never / "metrics.jsonl") << "{}\n";
        fs::remove(link_b);
        fs::create_directory_symlink("../../store/never_started", link_b);
        auto started = sh(kBin + " run " + kTiny + " results_dir=" + dir + " name=second run_store=" + store);
        INFO(started.out);
        REQUIRE(started.code == 0);
        CHECK_THAT(started.out, Catch::Contains("linked the unfinished run"));
        CHECK(fs::canonical(link_b) == shared);
        CHECK(fs::exists(never / "metrics.jsonl"));  // the run itself stays
        fs::copy_file(shared / "results.json", never / "results.json");  // a finished run
        fs::remove(link_b);
        fs::create_directory_symlink("../../store/never_started", link_b);
        auto refused = sh(kBin + " run " + kTiny + " results_dir=" + dir + " name=second run_store=" + store);
        CHECK(refused.code == 2);
        CHECK_THAT(refused.out, Catch::Contains("not to this point's shared run"));
        CHECK(fs::read_symlink(link_b) == "../../store/never_started");
        // out of the store, started: the user's
        const fs::path outside = fs::path(dir) / "outside_run";
        fs::create_directories(outside);
        std::ofstream(outside / "metrics.jsonl") << "{}\n";
        fs::remove(link_b);
        fs::create_directory_symlink("../../outside_run", link_b);
        auto refused_out = sh(kBin + " run " + kTiny + " results_dir=" + dir + " name=second run_store=" + store);
        CHECK(refused_out.code == 2);
        CHECK_THAT(refused_out.out, Catch::Contains("not to this point's shared run"));
        // refused before anything is made: a store that did not exist stays so, with no run directory in it
        const fs::path fresh = fs::path(dir) / "fresh_store";
        auto refused_new = sh(kBin + " run " + kTiny + " results_dir=" + dir + " name=second run_store=" + fresh.string());
        CHECK(refused_new.code == 2);
        CHECK_THAT(refused_new.out, Catch::Contains("not to this point's shared run"));
        CHECK_FALSE(fs::exists(fresh));
        fs::remove(link_b);
        fs::remove_all(outside);
        fs::remove_all(never);
        fs::create_directory_symlink(fs::relative(shared, link_b.parent_path()), link_b);
    }
    // an experiment whose sweep names the same point by another key (rows model.position.k, as the
    // converged Table 2 reads Table 1's Shaw k = 16 runs): the shared run fills its row under this
    // experiment's name and labels (it was shown as "–" under the trainer's labels)
    auto pos = sh(kBin + " run " + kTiny + " results_dir=" + dir + " name=by_position run_store=" + store +
                  " train.epochs=1 'sweep.grid={seed: [3], model.position: [{type: shaw, k: 2}]}' --quiet");
    REQUIRE(pos.code == 0);
    auto k = sh(kBin + " run " + kTiny + " results_dir=" + dir + " name=by_k run_store=" + store +
                " train.epochs=1 'sweep.grid={seed: [3], model.position.k: [2]}' report.rows=model.position.k");
    INFO(k.out);
    REQUIRE(k.code == 0);
    CHECK_THAT(k.out, Catch::Contains("finished earlier, skipped"));
    auto krep = sh(kBin + " report " + dir + "/by_k");
    REQUIRE(krep.code == 0);
    CHECK_THAT(slurp(fs::path(dir) / "by_k/report.md"), Catch::Matches("[\\s\\S]*\\| 2 \\| [0-9.]+ \\(n=1\\)[\\s\\S]*"));
    // its learning curve too, under this experiment's name for it (the plot read the trainer's run name and
    // found no curve: converged Tables 2 and 3 had no learning-curve plot)
    const std::string own = fs::directory_iterator(fs::path(dir) / "by_k/runs")->path().filename().string();
    CHECK(fs::file_size(fs::path(dir) / "by_k/plots" / (own + ".valid.dat")) > 0);
    if (std::system("command -v gnuplot > /dev/null 2>&1") == 0) CHECK(fs::exists(fs::path(dir) / "by_k/plots/learning_curves.png"));
    // a different config is a different run
    auto c = sh(kBin + " run " + kTiny + " results_dir=" + dir + " name=third run_store=" + store + " train.epochs=2 --quiet");
    REQUIRE(c.code == 0);
    CHECK(fs::canonical(fs::path(dir) / "third/runs/seed=3") != shared);
    // runs/<id> that is not the link is never replaced
    fs::remove(fs::path(dir) / "first/runs/seed=3");
    fs::create_directories(fs::path(dir) / "first/runs/seed=3");
    auto d = sh(kBin + " run " + kTiny + " results_dir=" + dir + " name=first run_store=" + store);
    CHECK(d.code == 2);
    CHECK_THAT(d.out, Catch::Contains("is not a link to the shared run"));
    fs::remove_all(dir);
}

TEST_CASE("run_lock/a_run_being_trained_elsewhere_is_skipped", "[e2e][lock]") {
    const std::string dir = fresh_dir("lock");
    const fs::path run = fs::path(dir) / "tiny_copy/runs/seed=3";
    fs::create_directories(run);
    const int fd = ::open((run / ".lock").c_str(), O_RDWR | O_CREAT, 0644);
    REQUIRE(fd >= 0);
    REQUIRE(::write(fd, "pid 4242 on elsewhere\n", 22) == 22);
    REQUIRE(::flock(fd, LOCK_EX | LOCK_NB) == 0);  // another process of ours in effect (flock is per open file)
    auto r = sh(kBin + " run " + kTiny + " results_dir=" + dir);
    INFO(r.out);
    CHECK(r.code == 0);
    CHECK_THAT(r.out, Catch::Contains("is being trained by pid 4242 on elsewhere"));
    CHECK_FALSE(fs::exists(run / "results.json"));
    CHECK_FALSE(fs::exists(run / "metrics.jsonl"));
    ::close(fd);  // released: the next run trains it
    auto again = sh(kBin + " run " + kTiny + " results_dir=" + dir + " --quiet");
    CHECK(again.code == 0);
    CHECK(fs::exists(run / "results.json"));
    fs::remove_all(dir);
}

TEST_CASE("training/warmup_longer_than_the_run_is_warned_about", "[training]") {
    const std::string dir = fresh_dir("warmup");
    auto r = sh(kBin + " run " + kTiny + " results_dir=" + dir + " train.warmup=4000 train.epochs=1");
    INFO(r.out);
    REQUIRE(r.code == 0);
    CHECK_THAT(r.out, Catch::Contains("warning: train.warmup (4000) is longer than the whole run"));
    fs::remove_all(dir);
}

TEST_CASE("config/a_fifo_is_refused_not_read_forever", "[config][errors]") {
    const std::string dir = fresh_dir("fifo");
    const std::string fifo = dir + "/config.yaml";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    auto r = sh("timeout 20 " + kBin + " run " + fifo);
    CHECK(r.code == 2);
    CHECK_THAT(r.out, Catch::Contains("not a regular file"));
    fs::remove_all(dir);
}

TEST_CASE("model/two_encodings_of_one_type_have_their_own_parameters", "[e2e][position]") {
    // Two Shaw encodings with different k in one model: their tables used to share the name
    // self_attn.rel_k, so the run trained and then failed to load its own best checkpoint.
    const std::string dir = fresh_dir("two-shaw");
    auto r = sh(kBin + " run " + kTiny + " results_dir=" + dir + " 'model.position=[{type: shaw, k: 2}, {type: shaw, k: 3}]' --quiet");
    INFO(r.out);
    REQUIRE(r.code == 0);
    const fs::path best = fs::path(dir) / "tiny_copy/runs/seed=3/checkpoints/best/params";
    CHECK(fs::exists(best / "encoder.layers.0.self_attn.position0.rel_k.npy"));
    CHECK(fs::exists(best / "encoder.layers.0.self_attn.position1.rel_k.npy"));
    CHECK_FALSE(fs::exists(best / "encoder.layers.0.self_attn.rel_k.npy"));
    // one encoding keeps the short names (checkpoints of earlier runs still load)
    const std::string one = fresh_dir("one-shaw");
    REQUIRE(sh(kBin + " run " + kTiny + " results_dir=" + one + " train.epochs=1 --quiet").code == 0);
    CHECK(fs::exists(fs::path(one) / "tiny_copy/runs/seed=3/checkpoints/best/params/encoder.layers.0.self_attn.rel_k.npy"));
    fs::remove_all(dir), fs::remove_all(one);
}

TEST_CASE("training/killed_and_resumed_equals_uninterrupted", "[training][resume]") {
    const std::string ref = fresh_dir("resume-ref");
    REQUIRE(sh(kBin + " run " + kTiny + " results_dir=" + ref + " --quiet").code == 0);
    const fs::path rr = fs::path(ref) / "tiny_copy/runs/seed=3";
    const auto curve = loss_curve(rr / "metrics.jsonl");
    for (int kill_after_lines : {7, 23}) {
        const std::string dir = fresh_dir("resume-" + std::to_string(kill_after_lines));
        const fs::path run = fs::path(dir) / "tiny_copy/runs/seed=3";
        pid_t pid = fork();
        if (pid == 0) {
            const std::string rd = "results_dir=" + dir;
            execl(kBin.c_str(), kBin.c_str(), "run", kTiny.c_str(), rd.c_str(), "--quiet", (char*)nullptr);
            _exit(127);
        }
        // SIGKILL once the run has logged enough steps (mid-epoch, possibly mid-checkpoint)
        for (int i = 0; i < 20000; ++i) {
            if (fs::exists(run / "metrics.jsonl") && loss_curve(run / "metrics.jsonl").size() >= std::size_t(kill_after_lines)) break;
            std::this_thread::sleep_for(std::chrono::microseconds(200));
        }
        kill(pid, SIGKILL);
        int st = 0;
        waitpid(pid, &st, 0);
        REQUIRE_FALSE(fs::exists(run / "results.json"));
        auto r = sh(kBin + " run " + kTiny + " results_dir=" + dir + " --quiet");
        INFO(r.out);
        REQUIRE(r.code == 0);
        CHECK(loss_curve(run / "metrics.jsonl") == curve);
        CHECK(slurp(run / "hyp.test.txt") == slurp(rr / "hyp.test.txt"));
        auto m1 = metrics_of(run), m0 = metrics_of(rr);
        for (auto it : m0) CHECK(m1[it.first.as<std::string>()].as<std::string>() == it.second.as<std::string>());
        fs::remove_all(dir);
    }
    fs::remove_all(ref);
}

TEST_CASE("training/sigint_stops_cleanly_with_a_checkpoint", "[training][resume]") {
    const std::string dir = fresh_dir("sigint");
    const fs::path run = fs::path(dir) / "tiny_copy/runs/seed=3";
    pid_t pid = fork();
    if (pid == 0) {
        const std::string rd = "results_dir=" + dir;
        execl(kBin.c_str(), kBin.c_str(), "run", kTiny.c_str(), rd.c_str(), "train.epochs=50", "--quiet", (char*)nullptr);
        _exit(127);
    }
    for (int i = 0; i < 20000 && !(fs::exists(run / "metrics.jsonl") && loss_curve(run / "metrics.jsonl").size() >= 3); ++i)
        std::this_thread::sleep_for(std::chrono::microseconds(500));
    kill(pid, SIGINT);
    int st = 0;
    waitpid(pid, &st, 0);
    REQUIRE(WIFEXITED(st));
    CHECK(WEXITSTATUS(st) == 130);
    CHECK(checkpoint_exists((run / "checkpoints/last").string()));
    CHECK_FALSE(fs::exists(run / "results.json"));
    fs::remove_all(dir);
}

TEST_CASE("training/nonfinite_loss_stops_with_step_and_keeps_checkpoint", "[training][errors]") {
    // Injected through the trainer API: a NaN loss at step 7 (after the checkpoint at step 5).
    const std::string dir = fresh_dir("nan");
    auto model = test::positions<float>({{"shaw", {{"k", "2"}}}});
    nn::TransformerConfig tc = test::tiny_config(12);
    nn::Transformer<float> m(tc, model);
    std::vector<Example> data;
    for (int i = 0; i < 100; ++i) data.push_back({{4, 5, std::int32_t(6 + i % 5)}, {4, 5, std::int32_t(6 + i % 5)}});
    TrainConfig tcfg;
    tcfg.epochs = 5;
    tcfg.batch_tokens = 40;
    tcfg.warmup = 10;
    tcfg.checkpoint_every = 5;
    {
        Trainer t(m, data, data, tcfg, 1, dir, "h");
        t.inject_nonfinite_at(7);
        try {
            t.run();
            FAIL("no error for a NaN loss");
        } catch (const NonFiniteError& e) {
            CHECK_THAT(e.what(), Catch::Contains("step 7") && Catch::Contains("nan") && Catch::Contains("step 5"));
        }
        auto st = YAML::LoadFile(dir + "/checkpoints/last/state.json");
        CHECK(st["step"].as<int>() == 5);
    }
    fs::remove_all(dir);
    tcfg.on_nonfinite = "skip";
    Trainer t2(m, data, data, tcfg, 1, dir, "h");
    t2.inject_nonfinite_at(7);
    auto out = t2.run();
    CHECK(out.progress.step > 7);
    CHECK_THAT(slurp(fs::path(dir) / "metrics.jsonl"), Catch::Contains("skipped_nonfinite"));
    fs::remove_all(dir);
}

TEST_CASE("checkpoint/npy_round_trip_and_errors", "[checkpoint]") {
    const std::string dir = fresh_dir("npy");
    Array<float> a = test::randn<float>({3, 4, 5}, 1);
    write_npy(dir + "/a.npy", a);
    Array<float> b = read_npy<float>(dir + "/a.npy");
    CHECK(shape_of(b) == Shape{3, 4, 5});
    for (std::size_t i = 0; i < a.size(); ++i) REQUIRE(a.data()[i] == b.data()[i]);
    CHECK(slurp(dir + "/a.npy").substr(1, 5) == "NUMPY");
    // truncated file
    const std::string full = slurp(dir + "/a.npy");
    std::ofstream(dir + "/t.npy", std::ios::binary) << full.substr(0, full.size() - 7);
    CHECK_THROWS_WITH(read_npy<float>(dir + "/t.npy"), Catch::Contains("t.npy") && Catch::Contains("truncated"));
    // checkpoint of another model shape
    auto pf = test::positions<float>({{"sinusoidal", {}}});
    nn::TransformerConfig c1 = test::tiny_config(11), c2 = test::tiny_config(13);
    nn::Transformer<float> m1(c1, pf), m2(c2, pf);
    TrainProgress pr;
    save_checkpoint(dir + "/ck", m1.named_parameters(), nullptr, pr);
    auto before = m2.named_parameters()[0].second.value();
    CHECK_THROWS_WITH(load_checkpoint(dir + "/ck", m2.named_parameters(), nullptr),
                      Catch::Contains("src_embed.weight") && Catch::Contains("(11, 8)") && Catch::Contains("(13, 8)"));
    const bool unchanged = m2.named_parameters()[0].second.value() == before;
    CHECK(unchanged);  // nothing loaded on a mismatch
    fs::remove_all(dir);
}

// The JSON relpos writes (nlohmann-json): numbers in their shortest form at the stated precision, null for
// what JSON cannot hold, every string escaped, one-line objects spaced as the files always were.
TEST_CASE("json/numbers_strings_and_lines_are_written_right", "[json]") {
    CHECK(json_line(json_number(0.45, 4)) == "0.45");
    CHECK(json_line(json_number(2.0 / 3.0, 4)) == "0.6667");
    CHECK(json_line(json_number(-1.23456789, 6)) == "-1.234568");
    CHECK(json_line(json_number(std::nan(""), 4)) == "null");
    CHECK(json_line(json_number(-INFINITY, 4)) == "null");
    CHECK(json_line(json_significant(3.0 / 160000.0 * (1 + 1e-9), 6)) == "1.875e-05");
    const std::string tricky = "a \"quoted\" back\\slash\nnew line \x01 tab\t";
    const std::string line = json_line(Json{{"step", 3}, {"label", tricky}, {"loss", json_number(1.5, 6)}});
    CHECK(line == R"({"step": 3, "label": "a \"quoted\" back\\slash\nnew line \u0001 tab\t", "loss": 1.5})");
    CHECK(Json::parse(line)["label"].get<std::string>() == tricky);  // round trip
    CHECK_THROWS_WITH(parse_json_or_throw<DataError>("{\"a\": ", "x.json"),
                      Catch::StartsWith("x.json is not valid JSON (") && !Catch::Contains("[json.exception"));
    // A number beyond a double is nlohmann's out_of_range, not a parse_error: still the one sentence
    // (found by the checkpoint fuzzer in state.json).
    CHECK_THROWS_AS(parse_json_or_throw<DataError>("{\"step\": 1e400}", "x.json"), DataError);
}

// A seq2seq split asked only for teacher-forced metrics (loss, ppl) is scored without decoding it.
TEST_CASE("runner/loss_only_evaluation_decodes_nothing", "[runner][e2e]") {
    const std::string dir = fresh_dir("loss_only");
    const std::string run = tiny_run(dir, "'sweep.seeds=[1]' train.epochs=1 --quiet -j 1");
    const fs::path r = fs::path(dir) / "tiny_copy" / "runs" / "seed=1";
    test::Cmd c = test::sh(run + "'eval.metrics=[loss, ppl]'");
    INFO(c.out);
    REQUIRE(c.code == 0);
    const std::string results = slurp(r / "results.json");
    CHECK_THAT(results, Catch::Contains("\"test.loss\"") && Catch::Contains("\"test.ppl\""));
    CHECK_THAT(results, !Catch::Contains("accuracy"));
    CHECK_FALSE(fs::exists(r / "hyp.test.txt"));
    CHECK_THAT(slurp(r / "log.txt"), Catch::Contains("loss only, nothing to decode"));
    // with a metric that needs the output, the split is decoded as before
    fs::remove_all(dir);
    c = test::sh(run + "'eval.metrics=[loss, accuracy]'");
    REQUIRE(c.code == 0);
    CHECK(fs::exists(r / "hyp.test.txt"));
    CHECK_THAT(slurp(r / "results.json"), Catch::Contains("\"test.accuracy\""));
    fs::remove_all(dir);
}

// --start-before: past the deadline no new run starts (the command says how many are left and exits 0),
// before it nothing changes; a malformed time is refused up front.
TEST_CASE("runner/start_before_starts_no_new_run_after_the_deadline", "[runner][cli]") {
    const std::string dir = fresh_dir("start_before");
    const std::string run = tiny_run(dir, "'sweep.seeds=[1, 2]' --quiet -j 1");
    const fs::path runs = fs::path(dir) / "tiny_copy" / "runs";
    test::Cmd c = test::sh(run + "--start-before +0s");
    INFO(c.out);
    CHECK(c.code == 0);
    CHECK_THAT(c.out, Catch::Contains("2 run(s) not started: --start-before had passed"));
    CHECK_FALSE(fs::exists(runs / "seed=1" / "results.json"));
    c = test::sh(run + "--start-before +1h");
    CHECK(c.code == 0);
    CHECK(fs::exists(runs / "seed=1" / "results.json"));
    CHECK(fs::exists(runs / "seed=2" / "results.json"));
    CHECK_THAT(c.out, !Catch::Contains("not started"));
    for (const char* bad : {"14:00", "+5", "+m", "@", "+99999999999999h"}) {
        c = test::sh(run + "--start-before '" + bad + "'");
        INFO(bad);
        CHECK(c.code == 2);
        CHECK_THAT(c.out, Catch::Contains("--start-before") && Catch::Contains("expected +<minutes>m"));
    }
    fs::remove_all(dir);
}

// --finish-before: with no finished run it acts as --start-before; once a run has finished, a new one
// starts only while that run's length (+10% and 5 minutes) still fits before the time.
TEST_CASE("runner/finish_before_starts_only_runs_that_can_finish", "[runner][cli]") {
    const std::string dir = fresh_dir("finish_before");
    const std::string run = tiny_run(dir, "--quiet -j 1");
    const fs::path runs = fs::path(dir) / "tiny_copy" / "runs";
    test::Cmd c = test::sh(run + "'sweep.seeds=[1]' --finish-before +1h");  // nothing timed yet: starts
    INFO(c.out);
    REQUIRE(c.code == 0);
    CHECK_THAT(c.out, Catch::Contains("no finished run to time yet"));
    REQUIRE(fs::exists(runs / "seed=1" / "results.json"));
    // seed 1 took seconds: 5 minutes and a bit are needed, 4 are left -> seed 2 does not start
    c = test::sh(run + "'sweep.seeds=[1, 2]' --finish-before +4m");
    CHECK(c.code == 0);
    CHECK_THAT(c.out, Catch::Contains("1 run(s) not started: the last start --finish-before allows had passed"));
    CHECK_FALSE(fs::exists(runs / "seed=2" / "results.json"));
    c = test::sh(run + "'sweep.seeds=[1, 2]' --finish-before +10m");
    CHECK(c.code == 0);
    CHECK_THAT(c.out, Catch::Contains("a run takes up to 5 min here"));
    CHECK(fs::exists(runs / "seed=2" / "results.json"));
    c = test::sh(run + "--finish-before 17:00");
    CHECK(c.code == 2);
    CHECK_THAT(c.out, Catch::Contains("--finish-before '17:00': expected +<minutes>m"));
    fs::remove_all(dir);
}

TEST_CASE("decode/greedy_is_beam_one_and_beam_scores_at_least_greedy", "[decode]") {
    auto pf = test::positions<float>({{"shaw", {{"k", "2"}}}});
    nn::TransformerConfig tc = test::tiny_config(12);
    nn::Transformer<float> m(tc, pf);
    m.eval();
    std::vector<std::int32_t> src = {4, 5, 6, 7, 8, 9, 10, 0};
    DecodeOptions g;
    g.beam = 1;
    g.max_len_a = 1;
    g.max_len_b = 3;
    auto greedy = translate_batch(m, src, 2, 4, {4, 3}, g);
    REQUIRE(greedy.size() == 2);
    for (auto& h : greedy) CHECK(h.size() <= 7);
    // beam search's best hypothesis has a (length-normalised) score >= greedy's under the model
    auto score = [&](const std::vector<std::int32_t>& src1, std::size_t L, const std::vector<std::int32_t>& hyp, double alpha) {
        NoGradGuard ng;
        auto mask = m.padding_mask(src1, 1, L);
        auto mem = m.encode(src1, 1, L, mask);
        auto st = m.start_decoding(mem, mask);
        double s = 0;
        std::int32_t prev = 2;
        std::vector<std::int32_t> seq = hyp;
        seq.push_back(3);
        for (auto t : seq) {
            auto lg = m.decode_step({prev}, st).value();
            double mx = -1e30, z = 0;
            for (std::size_t v = 0; v < 12; ++v) mx = std::max(mx, double(lg(0, v)));
            for (std::size_t v = 0; v < 12; ++v) z += std::exp(double(lg(0, v)) - mx);
            s += double(lg(0, std::size_t(t))) - mx - std::log(z);
            prev = t;
        }
        return s / length_penalty(seq.size(), alpha);
    };
    DecodeOptions b = g;
    b.beam = 4;
    std::vector<std::int32_t> one = {4, 5, 6, 7};
    auto gh = translate_batch(m, one, 1, 4, {4}, g)[0];
    auto bh = translate_batch(m, one, 1, 4, {4}, b)[0];
    if (gh.size() < 7 && bh.size() < 7)  // both ended with EOS (not cut by the length limit)
        CHECK(score(one, 4, bh, 0.6) >= score(one, 4, gh, 0.6) - 1e-5);
}

TEST_CASE("decode/length_penalty_is_gnmt", "[decode]") {
    // lp(Y) = ((5 + |Y|) / 6)^alpha (Wu et al. 2016, eq. 14): 1 for one token, 2^alpha for seven. The
    // beam test above divides by the same function on both sides, so only a value check sees a wrong one.
    CHECK(length_penalty(1, 0.6) == Approx(1.0).epsilon(1e-15));
    CHECK(length_penalty(7, 0.6) == Approx(std::pow(2.0, 0.6)).epsilon(1e-15));
    CHECK(length_penalty(19, 1.0) == Approx(4.0).epsilon(1e-15));
    CHECK(length_penalty(12, 0.0) == 1.0);
}
