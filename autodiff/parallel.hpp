// One thread pool for everything: relpos runs OpenBLAS single-threaded and splits work itself —
// large gemms by row (or column) blocks, batches of small gemms by batch, and row-wise kernels
// (softmax, layer norm, cross-entropy, elementwise ops) by contiguous ranges.
//
// Why not OpenBLAS's own threads plus an OpenMP pool: two pools on 2 cores fight (OpenBLAS workers
// spin after each call), small per-head gemms run slower on 2 OpenBLAS threads than on 1, and the
// elementwise half of a training step would stay single-threaded. With one pool nothing
// oversubscribes, and every output element is computed by the same code whatever the split, so the
// numbers depend only on the thread count (same seed + same thread count = same numbers).
#pragma once

#include <cstddef>
#include <functional>

namespace relpos::parallel {

// Threads used by parallel_for called from this thread (1 = everything on the calling thread). Each
// calling thread has its own pool, so concurrent callers (the runner's --jobs) never share workers.
// Call it from the thread that will run the work, while that thread has no parallel_for running.
void set_num_threads(int n);
int num_threads();

// CPU seconds used so far by the calling thread and the workers of its pool, including workers a
// set_num_threads call has since stopped: the core time of the work this thread drives (a training run
// under the runner's --jobs, whose process CPU time would also count the other runs). Monotone.
double cpu_seconds();

// Calls fn(begin, end) on disjoint contiguous ranges covering [0, n), in parallel when n >= 2 * grain
// and more than one thread is configured. Nested calls run inline. The split depends only on n,
// grain and the thread count.
void parallel_for(std::size_t n, std::size_t grain, const std::function<void(std::size_t, std::size_t)>& fn);

}  // namespace relpos::parallel
