#include "autodiff/parallel.hpp"

#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace relpos::parallel {

namespace {

// A fixed set of workers; the caller runs chunk 0 itself. Workers sleep on a condition variable
// between jobs (no spinning, so they never compete with the caller for a core while idle).
class Pool {
public:
    ~Pool() { resize(1); }

    void resize(int n) {
        stop_workers();
        threads_ = std::max(1, n);
        // Workers start from the current generation, so earlier jobs never look new to them and a job
        // posted before a worker gets scheduled is still seen.
        const std::uint64_t gen = generation_;
        for (int i = 1; i < threads_; ++i) workers_.emplace_back([this, i, gen] { work(i, gen); });
    }
    int size() const { return threads_; }
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
            pending_ = static_cast<int>(chunks) - 1;  // chunk 0 is the caller's
            ++generation_;
        }
        cv_.notify_all();
        job(0);
        std::unique_lock<std::mutex> lk(mu_);
        done_cv_.wait(lk, [this] { return pending_ == 0; });
        job_ = nullptr;
    }

private:
    void work(int index, std::uint64_t seen) {
        for (;;) {
            const std::function<void(std::size_t)>* job;
            {
                std::unique_lock<std::mutex> lk(mu_);
                cv_.wait(lk, [&] { return quit_ || generation_ != seen; });
                if (quit_) return;
                seen = generation_;
                if (!job_ || static_cast<std::size_t>(index) >= chunks_) continue;
                job = job_;
            }
            (*job)(static_cast<std::size_t>(index));
            std::lock_guard<std::mutex> lk(mu_);
            if (--pending_ == 0) done_cv_.notify_one();
        }
    }
    void stop_workers() {
        {
            std::lock_guard<std::mutex> lk(mu_);
            quit_ = true;
        }
        cv_.notify_all();
        for (auto& t : workers_) t.join();
        workers_.clear();
        quit_ = false;
    }

    int threads_ = 1;
    std::vector<std::thread> workers_;
    std::mutex mu_;
    std::condition_variable cv_, done_cv_;
    const std::function<void(std::size_t)>* job_ = nullptr;
    std::size_t chunks_ = 0;
    int pending_ = 0;
    std::uint64_t generation_ = 0;
    bool quit_ = false;
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
