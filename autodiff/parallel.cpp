#include "autodiff/parallel.hpp"

#include <pthread.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace relpos::parallel {

namespace {

// A fixed set of workers; the caller runs chunk 0 itself. Between jobs a worker spins briefly (see
// kSpin), then sleeps on a condition variable, so an idle pool never holds a core for long.
class Pool {
public:
    ~Pool() { resize(1); }

    void resize(int n) {
        stop_workers();
        threads_ = std::max(1, n);
        // Workers start from the current generation, so earlier jobs never look new to them and a job
        // posted before a worker gets scheduled is still seen.
        const std::uint64_t gen = generation_.load();
        for (int i = 1; i < threads_; ++i) workers_.emplace_back([this, i, gen] { work(i, gen); });
    }
    int size() const { return threads_; }
    // The calling thread's CPU time, its workers', and that of workers stopped before (retired_cpu_).
    double cpu_seconds() {
        double s = retired_cpu_ + clock_seconds(CLOCK_THREAD_CPUTIME_ID);
        for (auto& t : workers_) s += thread_cpu_seconds(t);
        return s;
    }
    void forget_after_fork() {
        new std::vector<std::thread>(std::move(workers_));  // leaked: see forget_workers_in_child
        workers_.clear();
        threads_ = 1;
    }

    void run(std::size_t chunks, const std::function<void(std::size_t)>& job) {
        {
            std::lock_guard<std::mutex> lk(mu_);
            job_ = &job;
            chunks_ = chunks;
            pending_.store(static_cast<int>(chunks) - 1, std::memory_order_relaxed);  // chunk 0 is the caller's
            generation_.fetch_add(1, std::memory_order_release);
        }
        cv_.notify_all();
        job(0);
        // The workers' chunks usually end about when the caller's does: wait a moment before sleeping.
        spin_while([this] { return pending_.load(std::memory_order_acquire) != 0; });
        std::unique_lock<std::mutex> lk(mu_);
        done_cv_.wait(lk, [this] { return pending_.load(std::memory_order_acquire) == 0; });
        job_ = nullptr;
    }

private:
    // A worker that has just finished a job spins this long for the next one before it sleeps on the
    // condition variable: a training step posts hundreds of small jobs back to back, and waking a
    // sleeping thread costs tens of microseconds (on a small model, 2 threads were slower than 1).
    // 1-thread pools have no workers and never spin.
    static constexpr auto kSpin = std::chrono::microseconds(50);
    template <class F>
    static void spin_while(F&& busy) {
        const auto until = std::chrono::steady_clock::now() + kSpin;
        for (unsigned i = 1; busy(); ++i) {
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#endif
            if (i % 64 == 0 && std::chrono::steady_clock::now() > until) return;
        }
    }

    void work(int index, std::uint64_t seen) {
        for (;;) {
            spin_while([&] {
                return generation_.load(std::memory_order_acquire) == seen && !quit_.load(std::memory_order_relaxed);
            });
            const std::function<void(std::size_t)>* job;
            {
                std::unique_lock<std::mutex> lk(mu_);
                cv_.wait(lk, [&] { return quit_.load() || generation_.load() != seen; });
                if (quit_.load()) return;
                seen = generation_.load();
                if (!job_ || static_cast<std::size_t>(index) >= chunks_) continue;
                job = job_;
            }
            (*job)(static_cast<std::size_t>(index));
            std::lock_guard<std::mutex> lk(mu_);
            if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) done_cv_.notify_one();
        }
    }
    static double clock_seconds(clockid_t id) {
        timespec ts{};
        if (clock_gettime(id, &ts) != 0) return 0;
        return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
    }
    static double thread_cpu_seconds(std::thread& t) {
        clockid_t id;
        return pthread_getcpuclockid(t.native_handle(), &id) == 0 ? clock_seconds(id) : 0;
    }
    void stop_workers() {
        // a worker's clock is gone once the thread has exited: read it before telling it to (it is idle now; the
        // few microseconds it may still spin go uncounted)
        for (auto& t : workers_) retired_cpu_ += thread_cpu_seconds(t);
        {
            std::lock_guard<std::mutex> lk(mu_);
            quit_.store(true);
        }
        cv_.notify_all();
        for (auto& t : workers_) t.join();
        workers_.clear();
        quit_.store(false);
    }

    int threads_ = 1;
    double retired_cpu_ = 0;  // CPU seconds of workers stopped by resize()
    std::vector<std::thread> workers_;
    std::mutex mu_;
    std::condition_variable cv_, done_cv_;
    const std::function<void(std::size_t)>* job_ = nullptr;
    std::size_t chunks_ = 0;
    std::atomic<int> pending_{0};
    std::atomic<std::uint64_t> generation_{0};  // written under mu_; read by spinning workers without it
    std::atomic<bool> quit_{false};
};

// One pool per calling thread: the runner's --jobs threads each train a run, and each owns its
// workers, so two runs never share a job slot (a single process-wide pool lost or repeated chunks
// when two callers posted jobs at once). A thread that never sets a count runs serially.
thread_local std::unique_ptr<Pool> t_pool;
Pool& pool() {
    if (!t_pool) t_pool = std::make_unique<Pool>();
    return *t_pool;
}

// After fork() only the forking thread exists in the child: forget its pool's workers (their
// std::thread handles are leaked on purpose; destroying them would terminate) and run serially
// until the child sets its own thread count. Other threads' pools are not reachable in the child.
void forget_workers_in_child() {
    if (t_pool) t_pool->forget_after_fork();
}
const bool g_atfork = [] {
    pthread_atfork(nullptr, nullptr, forget_workers_in_child);
    return true;
}();

thread_local bool t_inside = false;  // nested parallel_for runs inline

}  // namespace

void set_num_threads(int n) { pool().resize(n); }
int num_threads() { return pool().size(); }
double cpu_seconds() { return pool().cpu_seconds(); }

void parallel_for(std::size_t n, std::size_t grain, const std::function<void(std::size_t, std::size_t)>& fn) {
    const std::size_t threads = static_cast<std::size_t>(pool().size());
    if (threads <= 1 || t_inside || n < 2 * std::max<std::size_t>(grain, 1)) {
        if (n) fn(0, n);
        return;
    }
    const std::size_t chunks = std::min(threads, n / std::max<std::size_t>(grain, 1));
    const std::size_t per = n / chunks, extra = n % chunks;
    std::function<void(std::size_t)> job = [&](std::size_t c) {
        const std::size_t begin = c * per + std::min(c, extra);
        const std::size_t end = begin + per + (c < extra ? 1 : 0);
        const bool was = t_inside;
        t_inside = true;
        fn(begin, end);
        t_inside = was;
    };
    pool().run(chunks, job);
}

}  // namespace relpos::parallel
