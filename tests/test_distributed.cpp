// Data-parallel training (docs/distributed.md).
//
// [distributed] runs in every build: the shares of a batch partition it, the ranks' gradients (each share's
// loss summed and divided by the whole batch's tokens) add up to the whole batch's gradient, and the
// gradient sum keeps "no gradient" apart from "a zero gradient".
// [mpi] starts the relpos of this build under mpirun with 2 ranks: the same parameters as one process
// after 100 updates, and a job that loses a rank stops (no hang) and resumes to the same bits as one that
// was never interrupted. Without the CMake option RELPOS_MPI they say why they are skipped and pass.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include <catch2/catch.hpp>

#include "experiments/data/batching.hpp"
#include "experiments/train/checkpoint.hpp"
#include "experiments/train/distributed.hpp"
#include "experiments/train/trainer.hpp"
#include "tests/cli_helpers.hpp"
#include "tests/nn_helpers.hpp"

using namespace relpos;
namespace fs = std::filesystem;

namespace {

// Examples of lengths 2..9 (sources) and 1..7 (targets): shares of a batch hold different token counts,
// so a per-rank mean of means differs from the batch mean.
std::vector<Example> uneven_examples(std::size_t n) {
    Rng rng(11);
    std::vector<Example> ex(n);
    for (auto& e : ex) {
        e.src.resize(2 + rng.below(8));
        e.tgt.resize(1 + rng.below(7));
        for (auto& t : e.src) t = FIRST_FREE_ID + std::int32_t(rng.below(9));
        for (auto& t : e.tgt) t = FIRST_FREE_ID + std::int32_t(rng.below(9));
    }
    return ex;
}

// Every parameter's gradient after backward of `loss` (zeros where none flowed), then cleared.
std::vector<Array<float>> take_grads(const nn::NamedParams<float>& named) {
    std::vector<Array<float>> g;
    for (auto& [n, p] : named) {
        g.push_back(p.has_grad() ? p.grad() : zeros<float>(p.shape()));
        Var<float> q = p;
        q.zero_grad();
    }
    return g;
}

// max |a - b| / (1 + max |b|) over every element of every tensor.
double max_relative_difference(const std::vector<Array<float>>& a, const std::vector<Array<float>>& b) {
    double worst = 0;
    for (std::size_t k = 0; k < a.size(); ++k) {
        double scale = 0, diff = 0;
        for (std::size_t i = 0; i < b[k].size(); ++i) {
            scale = std::max(scale, double(std::abs(b[k].data()[i])));
            diff = std::max(diff, double(std::abs(a[k].data()[i] - b[k].data()[i])));
        }
        worst = std::max(worst, diff / (1.0 + scale));
    }
    return worst;
}

}  // namespace

TEST_CASE("distributed/shares_partition_a_batch", "[distributed]") {
    const std::vector<std::size_t> batch = {7, 3, 9, 1, 4, 8, 2};
    for (std::size_t ranks : {1, 2, 3, 4, 7, 9}) {
        std::vector<std::size_t> joined;
        std::size_t smallest = batch.size(), largest = 0;
        for (std::size_t r = 0; r < ranks; ++r) {
            const auto share = batch_share(batch, r, ranks);
            joined.insert(joined.end(), share.begin(), share.end());
            smallest = std::min(smallest, share.size());
            largest = std::max(largest, share.size());
        }
        INFO(ranks << " ranks");
        REQUIRE(joined == batch);         // in order, every row once
        REQUIRE(largest - smallest <= 1);  // balanced (9 ranks: two empty shares)
    }
    const auto ex = uneven_examples(20);
    const std::vector<std::size_t> idx = {0, 3, 5, 6, 11, 19};
    for (Layout l : {Layout::Seq2Seq, Layout::DecoderOnly, Layout::EncoderOnly}) {
        std::vector<Example> e = ex;
        if (l == Layout::EncoderOnly)  // labels at the last |tgt| positions of src
            for (auto& x : e) x.src.insert(x.src.end(), x.tgt.size(), FIRST_FREE_ID);
        REQUIRE(target_tokens(e, idx, l) == make_batch(e, idx, l).n_tgt_tokens);
    }
}

TEST_CASE("distributed/rank_gradients_add_up_to_the_batch_gradient", "[distributed]") {
    auto cfg = test::tiny_config(16);
    cfg.dims.dropout = cfg.dims.attention_dropout = 0;  // dropout differs between ranks by design
    nn::Transformer<float> model(cfg, test::positions<float>({{"shaw", {{"k", "2"}}}}));
    const auto named = model.named_parameters();
    const auto ex = uneven_examples(13);
    std::vector<std::size_t> batch(ex.size());
    for (std::size_t i = 0; i < batch.size(); ++i) batch[i] = i;
    const std::size_t tokens = target_tokens(ex, batch, Layout::Seq2Seq);

    batch_loss(model, make_batch(ex, batch), 0.1).backward();
    const auto whole = take_grads(named);
    for (std::size_t ranks : {2, 3, 5}) {
        // Each rank: its share's loss summed and divided by the whole batch's tokens; the ranks' sum.
        std::vector<Array<float>> summed, mean_of_means;
        for (std::size_t r = 0; r < ranks; ++r) {
            const Batch b = make_batch(ex, batch_share(batch, r, ranks));
            batch_loss(model, b, 0.1, tokens).backward();
            auto g = take_grads(named);
            batch_loss(model, b, 0.1).backward();  // the wrong average: each share's own mean, then / ranks
            auto m = take_grads(named);
            for (std::size_t k = 0; k < g.size(); ++k) {
                Array<float> wrong = m[k] / float(ranks);
                if (r == 0) {
                    summed.push_back(g[k]);
                    mean_of_means.push_back(wrong);
                } else {
                    summed[k] += g[k];
                    mean_of_means[k] += wrong;
                }
            }
        }
        INFO(ranks << " ranks");
        const double right = max_relative_difference(summed, whole), wrong = max_relative_difference(mean_of_means, whole);
        CAPTURE(right, wrong);
        CHECK(right < 1e-6);  // float32 round-off (the sums are added in another order)
        CHECK(wrong > 1e-3);  // what the check would catch
    }
}

TEST_CASE("distributed/gradient_sum_keeps_missing_gradients_missing", "[distributed]") {
    // One process: the sum is the identity, and a parameter no rank has a gradient for gets none (Adam
    // skips such parameters in a single process; a zero gradient would still move its moments).
    Var<float> a(full<float>({3}, 2.0f), true), b(full<float>({2, 2}, 1.0f), true);
    sum(a * a).backward();
    nn::NamedParams<float> named = {{"a", a}, {"b", b}};
    GradientSum sum(single_process(), named, 2);
    REQUIRE(sum.buckets() == 2);  // a parameter larger than a bucket is a bucket of its own
    std::vector<float> extras = {1.5f};
    sum.run(extras);
    REQUIRE(a.grad()(0) == 4.0f);
    REQUIRE(a.grad()(2) == 4.0f);
    REQUIRE_FALSE(b.has_grad());
    REQUIRE(extras[0] == 1.5f);
}

TEST_CASE("distributed/leaf_done_fires_once_per_parameter_when_its_gradient_is_complete", "[distributed]") {
    // w1 feeds two consumers (tanh(w1 * x) and w1 * w1), one of them late in backward; w2 one, early.
    Var<float> x(full<float>({4}, 0.5f));
    Var<float> w1(full<float>({4}, 0.3f), true), w2(full<float>({4}, -0.7f), true), unused(full<float>({2}, 1.0f), true);
    std::vector<std::pair<const Node<float>*, Array<float>>> seen;
    sum(w2 * tanh(w1 * x) + w1 * w1).backward([&](const Node<float>& p) { seen.push_back({&p, p.grad}); });
    REQUIRE(seen.size() == 2);  // `unused` is not in the graph: never reported
    REQUIRE(seen[0].first == w2.node().get());
    REQUIRE(seen[1].first == w1.node().get());
    const bool complete_w2 = seen[0].second == w2.grad(), complete_w1 = seen[1].second == w1.grad();
    REQUIRE(complete_w2);  // complete when reported: nothing was added afterwards
    REQUIRE(complete_w1);
    // The gradients are backward()'s, bit for bit.
    Var<float> v1(full<float>({4}, 0.3f), true), v2(full<float>({4}, -0.7f), true);
    sum(v2 * tanh(v1 * x) + v1 * v1).backward();
    const bool same1 = v1.grad() == w1.grad(), same2 = v2.grad() == w2.grad();
    REQUIRE(same1);
    REQUIRE(same2);

    // A bucket whose parameters are all complete goes out during backward, in bucket order.
    Var<float> a(full<float>({3}, 1.0f), true), b(full<float>({3}, 2.0f), true);
    nn::NamedParams<float> named = {{"a", a}, {"b", b}};  // buckets: [b], then [a] (reverse order)
    GradientSum gs(single_process(), named, 3);
    gs.start();
    sum(tanh(a) * b).backward([&](const Node<float>& p) { gs.leaf_done(p); });
    std::vector<float> extras;
    gs.finish(extras);
    REQUIRE(gs.sent_during_backward() == 2);
    REQUIRE(b.grad()(0) == Approx(std::tanh(1.0f)));
}

// ================================================================ under mpirun

namespace {

const std::string kMpiexec = RELPOS_MPIEXEC;
const std::string kSrc = RELPOS_SOURCE_DIR;

bool skip_without_mpi() {
    if (!kMpiexec.empty()) return false;
    WARN("skipped: this build has no MPI (cmake -DRELPOS_MPI=ON, or make mpi; docs/distributed.md)");
    return true;
}

// mpirun with 2 ranks on this machine, whatever its core count and user (root in containers).
std::string mpirun(int ranks) {
    return "env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none " +
           kMpiexec + " --oversubscribe --bind-to none -np " + std::to_string(ranks) + " ";
}

// A tiny copy run: 100 updates of tests/fixtures/tiny_copy.yaml (1 thread) into `results`.
std::string tiny_args(const std::string& results, const std::string& extra) {
    return "run tests/fixtures/tiny_copy.yaml results_dir=" + results +
           " train.epochs=20 train.max_steps=100 train.checkpoint_every=10 --quiet " + extra;
}

std::string results_dir(const std::string& name) {
    const fs::path d = fs::temp_directory_path() / ("relpos-mpi-" + name + "-" + std::to_string(getpid()));
    fs::remove_all(d);
    return d.string();
}

std::string slurp(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

// The rank's pid among mpirun's children (their environment names their rank).
pid_t rank_pid(pid_t mpirun_pid, int rank) {
    for (const auto& e : fs::directory_iterator("/proc")) {
        const std::string name = e.path().filename().string();
        if (name.find_first_not_of("0123456789") != std::string::npos) continue;
        std::ifstream stat(e.path() / "stat");
        std::string pid, comm, state;
        long ppid = 0;
        if (!(stat >> pid >> comm >> state >> ppid) || ppid != mpirun_pid) continue;
        const std::string env = slurp(e.path() / "environ");
        if (env.find("OMPI_COMM_WORLD_RANK=" + std::to_string(rank) + '\0') != std::string::npos)
            return static_cast<pid_t>(std::stol(pid));
    }
    return -1;
}

// Starts `mpirun -np 2 relpos <args>` and SIGKILLs rank `victim` once `checkpoints/last` has been written
// `nth` times (state.json's step changes); returns mpirun's exit status and output.
test::Cmd kill_rank_at(const std::string& args, const fs::path& run, int victim, int nth) {
    const std::string log = run.string() + ".mpirun.log";
    fs::create_directories(run.parent_path());
    const pid_t pid = fork();
    if (pid == 0) {
        if (chdir(kSrc.c_str()) != 0) _exit(127);
        const std::string cmd = "exec " + mpirun(2) + test::kRelposBin + " " + args + " >'" + log + "' 2>&1";
        execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
        _exit(127);
    }
    std::string last_step;
    int seen = 0;
    const auto t0 = std::chrono::steady_clock::now();
    int st = 0;
    bool exited = false;
    while (std::chrono::steady_clock::now() - t0 < std::chrono::seconds(120)) {
        if (waitpid(pid, &st, WNOHANG) == pid) {
            exited = true;
            break;
        }
        const std::string state = slurp(run / "checkpoints" / "last" / "state.json");
        if (!state.empty() && state != last_step) {
            last_step = state;
            if (++seen == nth) {
                const pid_t r = rank_pid(pid, victim);
                REQUIRE(r > 0);
                kill(r, SIGKILL);
                break;
            }
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    if (!exited) {
        // The others must stop on their own: give them 30 s (mpirun notices a lost rank within a second).
        const auto t1 = std::chrono::steady_clock::now();
        while (!exited && std::chrono::steady_clock::now() - t1 < std::chrono::seconds(30)) {
            if (waitpid(pid, &st, WNOHANG) == pid) exited = true;
            else std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        if (!exited) {
            kill(pid, SIGKILL);
            waitpid(pid, &st, 0);
            FAIL("mpirun -np 2 did not stop within 30 s after rank " << victim << " was killed: the job hung");
        }
    }
    return {WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st), slurp(log)};
}

}  // namespace

TEST_CASE("mpi/two_ranks_match_one_process_after_100_updates", "[mpi]") {
    if (skip_without_mpi()) return;
    // Dropout off: with it on, each rank draws its own masks (docs/distributed.md). lr 0.1, not the
    // fixture's 1.0: at that rate this tiny model's training is chaotic, and round-off differences of 1e-6
    // at step 27 grow to 3e-2 in the loss by step 40 (in one process too, across thread counts).
    const std::string no_dropout = "model.dropout=0 model.attention_dropout=0 train.lr=0.1";
    const std::string one = results_dir("one"), two = results_dir("two");
    const auto a = test::sh("cd '" + kSrc + "' && timeout 120 " + test::kRelposBin + " " + tiny_args(one, no_dropout));
    INFO(a.out);
    REQUIRE(a.code == 0);
    const auto b = test::sh("cd '" + kSrc + "' && timeout 120 " + mpirun(2) + test::kRelposBin + " " + tiny_args(two, no_dropout));
    INFO(b.out);
    REQUIRE(b.code == 0);
    const fs::path run_a = fs::path(one) / "tiny_copy" / "runs" / "seed=3", run_b = fs::path(two) / "tiny_copy" / "runs" / "seed=3";
    REQUIRE(slurp(run_b / "results.json").find("\"ranks\": 2") != std::string::npos);
    REQUIRE(slurp(run_b / "results.json").find("\"steps\": 100") != std::string::npos);
    // Rank 1 printed and wrote nothing: the same messages as one process, nothing in the working directory
    // (a rank other than 0 has no run directory; were it to write, its files would land there).
    auto count = [](const std::string& s, const std::string& what) {
        std::size_t n = 0;
        for (auto p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
        return n;
    };
    REQUIRE(count(b.out, "finished") == count(a.out, "finished"));
    REQUIRE(count(b.out, "\n") == count(a.out, "\n") + 1);  // + rank 0's line on the time in gradient sums
    REQUIRE(count(b.out, "waiting for the gradient sums") == 1);
    for (const char* f : {"checkpoints", "metrics.jsonl", ".lock"}) REQUIRE_FALSE(fs::exists(fs::path(kSrc) / f));
    // What the model computes, not its parameters: two ranks sum the gradient in another order than one
    // process (and OpenBLAS's kernel families order their sums differently again), and training amplifies
    // round-off: with the Haswell kernels the parameters of step 100 differ by up to 8.6e-3 (of 1.16) while
    // the losses still agree to 3e-4. Parameters whose gradient is round-off alone (k_proj.bias: it shifts a
    // whole logit row, which the softmax ignores) even move by ~lr a step in directions the round-off picks.
    // So: the first updates, before round-off has grown, must agree to float32 round-off (a per-rank mean of
    // means instead of the batch mean misses by orders of magnitude from step 1), and the whole curve and
    // the final validation loss to 1e-3 of their value.
    auto curve = [](const fs::path& r, const char* key) {
        std::ifstream f(r / "metrics.jsonl");
        std::vector<double> v;
        const std::string k = std::string("\"") + key + "\": ";
        for (std::string l; std::getline(f, l);)
            if (auto p = l.find(k); p != std::string::npos) v.push_back(std::stod(l.substr(p + k.size())));
        return v;
    };
    const auto la = curve(run_a, "train_loss"), lb = curve(run_b, "train_loss");
    REQUIRE(la.size() == 100);
    REQUIRE(lb.size() == 100);
    for (std::size_t i = 0; i < la.size(); ++i) {
        INFO("step " << i + 1 << ": " << la[i] << " vs " << lb[i]);
        if (i < 10) REQUIRE(std::abs(la[i] - lb[i]) <= 1e-5);  // metrics.jsonl prints 6 decimals
        REQUIRE(std::abs(la[i] - lb[i]) <= 1e-3 * std::abs(la[i]));
    }
    const auto va = curve(run_a, "valid_loss"), vb = curve(run_b, "valid_loss");
    REQUIRE_FALSE(va.empty());
    REQUIRE(va.size() == vb.size());
    INFO("validation loss " << va.back() << " vs " << vb.back());
    REQUIRE(std::abs(va.back() - vb.back()) <= 1e-3 * va.back());
    fs::remove_all(one);
    fs::remove_all(two);
}

TEST_CASE("mpi/a_lost_rank_stops_the_job_and_a_resume_gives_the_same_bits", "[mpi][reliability]") {
    if (skip_without_mpi()) return;
    // Dropout on: each rank's masks come from (seed, step, rank), so a resume continues them exactly.
    const std::string whole = results_dir("whole"), cut = results_dir("cut");
    const auto ref = test::sh("cd '" + kSrc + "' && timeout 120 " + mpirun(2) + test::kRelposBin + " " + tiny_args(whole, ""));
    INFO(ref.out);
    REQUIRE(ref.code == 0);
    const fs::path run = fs::path(cut) / "tiny_copy" / "runs" / "seed=3";
    // Rank 1 dies after the 2nd checkpoint, then rank 0 after the 3rd of the resumed job.
    for (const auto& [victim, nth] : std::vector<std::pair<int, int>>{{1, 2}, {0, 3}}) {
        const auto k = kill_rank_at(tiny_args(cut, ""), run, victim, nth);
        INFO("rank " << victim << " killed; mpirun said:\n" << k.out);
        REQUIRE(k.code != 0);
        REQUIRE_FALSE(fs::exists(run / "results.json"));
        std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the kernel releases the run's lock
    }
    const auto resumed = test::sh("cd '" + kSrc + "' && timeout 120 " + mpirun(2) + test::kRelposBin + " " + tiny_args(cut, ""));
    INFO(resumed.out);
    REQUIRE(resumed.code == 0);
    const fs::path want = fs::path(whole) / "tiny_copy" / "runs" / "seed=3";
    auto curve = [](const fs::path& r) {  // metrics.jsonl without its timings
        std::ifstream f(r / "metrics.jsonl");
        std::vector<std::string> lines;
        for (std::string l; std::getline(f, l);) lines.push_back(l.substr(0, l.find(", \"elapsed\"")));
        return lines;
    };
    REQUIRE(curve(run) == curve(want));
    for (const char* ck : {"best", "last"})
        for (const auto& e : fs::directory_iterator(want / "checkpoints" / ck / "params")) {
            INFO(e.path());
            REQUIRE(slurp(run / "checkpoints" / ck / "params" / e.path().filename()) == slurp(e.path()));
        }
    for (const char* h : {"hyp.val.txt", "hyp.test.txt"}) REQUIRE(slurp(run / h) == slurp(want / h));
    fs::remove_all(whole);
    fs::remove_all(cut);
}
