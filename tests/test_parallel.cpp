// The thread pool: ranges are covered exactly once, split gemms and kernels agree with the
// single-threaded ones, and the same thread count gives bit-identical numbers.
#include <atomic>
#include <chrono>
#include <thread>

#include <time.h>

#include "autodiff/parallel.hpp"
#include "nn/optim.hpp"
#include "tests/nn_helpers.hpp"

using namespace relpos;

namespace {
struct ThreadsGuard {  // restores the single-threaded default for the other tests
    explicit ThreadsGuard(int n) { blas::set_num_threads(n); }
    ~ThreadsGuard() { blas::set_num_threads(1); }
};

// Loss and every parameter gradient of one training step of a small model.
std::vector<Array<float>> step_grads(int threads) {
    ThreadsGuard g(threads);
    auto cfg = test::tiny_config(300);
    cfg.dims.d_model = 64;
    cfg.dims.heads = 4;
    cfg.dims.d_ff = 128;
    cfg.encoder_layers = cfg.decoder_layers = 2;
    nn::Transformer<float> model(cfg, test::positions<float>({{"shaw", {{"k", "4"}}}}));
    const std::size_t B = 24, L = 17;
    Rng rng(5);
    std::vector<std::int32_t> src(B * L), tin(B * L), tout(B * L);
    for (auto& x : src) x = 4 + std::int32_t(rng.below(296));
    for (auto& x : tout) x = 4 + std::int32_t(rng.below(296));
    for (std::size_t i = 0; i < tin.size(); ++i) tin[i] = i % L ? tout[i - 1] : 2;
    for (std::size_t b = 0; b < B; b += 3) src[b * L + L - 1] = 0;  // some padding
    auto mask = model.padding_mask(src, B, L);
    auto logits = model.decode(tin, B, L, model.encode(src, B, L, mask), mask);
    CrossEntropyOptions o;
    o.label_smoothing = 0.1;
    auto loss = cross_entropy(logits, tout, o);
    loss.backward();
    std::vector<Array<float>> out = {loss.value()};
    for (auto& p : model.parameters()) out.push_back(p.grad());
    return out;
}
}  // namespace

TEST_CASE("parallel/parallel_for_covers_each_index_once", "[parallel]") {
    ThreadsGuard g(2);
    for (std::size_t n : {0, 1, 7, 100, 1001, 65536}) {
        std::vector<std::atomic<int>> hits(n);
        parallel::parallel_for(n, 10, [&](std::size_t a, std::size_t b) {
            for (std::size_t i = a; i < b; ++i) hits[i]++;
        });
        for (std::size_t i = 0; i < n; ++i) REQUIRE(hits[i] == 1);
    }
}

// Jobs posted back to back (workers catch the next one while spinning) and with pauses longer than the
// spin (workers asleep on the condition variable), from two calling threads with pools of their own:
// every job's range is covered exactly once and nothing hangs.
TEST_CASE("parallel/jobs_back_to_back_and_after_pauses_from_two_callers", "[parallel]") {
    auto caller = [](int seed, std::atomic<long>* bad) {
        parallel::set_num_threads(3);
        std::vector<int> hits(97);
        for (int job = 0; job < 6000; ++job) {
            std::fill(hits.begin(), hits.end(), 0);
            parallel::parallel_for(hits.size(), 8, [&](std::size_t a, std::size_t b) {
                for (std::size_t i = a; i < b; ++i) hits[i]++;
            });
            for (int h : hits) *bad += h != 1;
            if ((job + seed) % 500 == 0) std::this_thread::sleep_for(std::chrono::microseconds(300));
        }
        parallel::set_num_threads(1);
    };
    std::atomic<long> bad{0};
    std::thread t1(caller, 0, &bad), t2(caller, 250, &bad);
    t1.join();
    t2.join();
    REQUIRE(bad == 0);
}

TEST_CASE("parallel/split_gemm_matches_single_thread", "[parallel]") {
    for (auto [m, n, k] : {std::tuple<std::size_t, std::size_t, std::size_t>{300, 200, 150}, {20, 900, 300}}) {
        for (bool ta : {false, true})
            for (bool tb : {false, true}) {
                Array<float> A = test::randn<float>(ta ? Shape{k, m} : Shape{m, k}, 1);
                Array<float> B = test::randn<float>(tb ? Shape{n, k} : Shape{k, n}, 2);
                Array<float> c1 = zeros<float>({m, n}), c2 = zeros<float>({m, n});
                blas::gemm(ta, tb, m, n, k, 1.f, A.data(), ta ? m : k, B.data(), tb ? k : n, 0.f, c1.data(), n);
                {
                    ThreadsGuard g(2);
                    blas::gemm(ta, tb, m, n, k, 1.f, A.data(), ta ? m : k, B.data(), tb ? k : n, 0.f, c2.data(), n);
                }
                INFO("m=" << m << " n=" << n << " k=" << k << " ta=" << ta << " tb=" << tb);
                test::require_close(c2, c1, 1e-4);
            }
    }
}

TEST_CASE("parallel/training_step_same_threads_same_numbers", "[parallel][determinism]") {
    auto a = step_grads(2), b = step_grads(2), s = step_grads(1);
    REQUIRE(a.size() == b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
        const bool same = a[i] == b[i];
        INFO("tensor " << i);
        REQUIRE(same);                       // bit-identical at the same thread count
        test::require_close(a[i], s[i], 2e-3);  // and close to the single-threaded step
    }
}

// blas::tune_process's choice of OpenBLAS kernels: an older family than the CPU runs is upgraded (the
// SSE3 fallback on unknown virtual CPUs; Haswell on AMD Zen 5, which OpenBLAS 0.3.21 does not know),
// never to a family the CPU lacks, and a family OpenBLAS chose for a CPU it knows is left alone.
TEST_CASE("blas/core_type_upgraded_only_to_what_the_cpu_runs", "[blas]") {
    blas::CpuFeatures sse, avx2, avx512, zen45;
    avx2.avx2_fma = avx512.avx2_fma = zen45.avx2_fma = true;
    avx512.avx512 = zen45.avx512 = true;
    zen45.avx512_bf16 = true;
    auto pick = [](const char* chosen, const blas::CpuFeatures& f) {
        const char* w = blas::better_core_type(chosen, f);
        return std::string(w ? w : "-");
    };
    CHECK(pick("Haswell", zen45) == "Cooperlake");  // Zen 5 (avx512_bf16) with OpenBLAS 0.3.21
    CHECK(pick("Zen", avx512) == "SkylakeX");
    CHECK(pick("Prescott", avx512) == "SkylakeX");
    CHECK(pick("prescott", avx2) == "Haswell");
    CHECK(pick("Nehalem", avx2) == "Haswell");
    CHECK(pick("Sandybridge", avx2) == "Haswell");
    CHECK(pick("Haswell", avx2) == "-");      // already the newest the CPU runs
    CHECK(pick("Zen", avx2) == "-");          // Zen 2/3: AVX2 kernels of their own, kept
    CHECK(pick("SkylakeX", zen45) == "-");    // OpenBLAS knows the CPU: never overridden
    CHECK(pick("Cooperlake", avx512) == "-");
    CHECK(pick("Prescott", sse) == "-");      // nothing better to run
    CHECK(pick("NewCore2030", zen45) == "-"); // a family not in the table: trust OpenBLAS
    // whatever this machine is, the choice is one it can run
    const blas::CpuFeatures here = blas::cpu_features();
    for (const char* c : {"Prescott", "Haswell", "Zen", "SkylakeX"}) {
        const std::string w = pick(c, here);
        if (w == "SkylakeX" || w == "Cooperlake") CHECK(here.avx512);
        if (w == "Cooperlake") CHECK(here.avx512_bf16);
        if (w == "Haswell") CHECK(here.avx2_fma);
    }
}

TEST_CASE("blas/core_type_notice_when_the_environment_holds_older_kernels", "[blas]") {
    struct EnvGuard {  // restores the two variables whatever happens
        std::string core, noreexec;
        bool had_core = false, had_noreexec = false;
        EnvGuard() {
            if (const char* c = std::getenv("OPENBLAS_CORETYPE")) had_core = true, core = c;
            if (const char* c = std::getenv("RELPOS_NO_REEXEC")) had_noreexec = true, noreexec = c;
            unsetenv("RELPOS_NO_REEXEC");
        }
        ~EnvGuard() {
            had_core ? setenv("OPENBLAS_CORETYPE", core.c_str(), 1) : unsetenv("OPENBLAS_CORETYPE");
            if (had_noreexec) setenv("RELPOS_NO_REEXEC", noreexec.c_str(), 1);
        }
    } guard;
    const blas::CpuFeatures here = blas::cpu_features();
    unsetenv("OPENBLAS_CORETYPE");
    CHECK(blas::core_type_notice().empty());  // nothing set: nothing to say
    setenv("OPENBLAS_CORETYPE", "Prescott", 1);
    const std::string note = blas::core_type_notice();
    if (here.avx2_fma) {
        CHECK_THAT(note, Catch::Contains("OPENBLAS_CORETYPE=Prescott"));
        CHECK_THAT(note, Catch::Contains(here.avx512 ? (here.avx512_bf16 ? "Cooperlake" : "SkylakeX") : "Haswell"));
    } else {
        CHECK(note.empty());
    }
    setenv("OPENBLAS_CORETYPE", "SapphireRapids", 1);  // the newest tier: never older than the CPU
    CHECK(blas::core_type_notice().empty());
}

TEST_CASE("parallel/cpu_seconds counts the calling thread and its workers, also after they stop", "[parallel]") {
    // Each chunk spins for a fixed amount of its own thread's CPU time: the pool's total must grow by at
    // least the sum (whatever the scheduling), the calling thread's own clock by less (the worker did part),
    // and stopping the workers (set_num_threads) must not take their time back.
    auto thread_cpu = [] {
        timespec ts{};
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
    };
    ThreadsGuard g(2);
    const double before = parallel::cpu_seconds(), own_before = thread_cpu();
    std::vector<double> spent(2, 0.0);
    parallel::parallel_for(2, 1, [&](std::size_t a, std::size_t b) {
        for (std::size_t i = a; i < b; ++i) {
            const double t0 = thread_cpu();
            volatile double x = 0;
            while (thread_cpu() - t0 < 0.05) x = x + 1;
            spent[i] = thread_cpu() - t0;
        }
    });
    const double total = parallel::cpu_seconds() - before, own = thread_cpu() - own_before;
    INFO("chunks " << spent[0] << " + " << spent[1] << ", pool " << total << ", calling thread " << own);
    CHECK(total >= spent[0] + spent[1] - 1e-3);
    CHECK(own < spent[0] + spent[1]);
    const double at_two = parallel::cpu_seconds();
    parallel::set_num_threads(1);  // the worker stops; its time stays counted
    CHECK(parallel::cpu_seconds() >= at_two - 1e-3);
    CHECK(parallel::cpu_seconds() - before >= spent[0] + spent[1] - 1e-3);
}
