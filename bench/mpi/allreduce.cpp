// Time of one gradient sum (GradientSum::run, the trainer's code path: buckets, non-blocking sums, polite
// waits) for a model of N float parameters, over the ranks mpirun started (docs/distributed.md).
// Built with the MPI option only:  mpirun -np 2 build-mpi/relpos_allreduce_bench [N] [repeats]
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "experiments/train/distributed.hpp"

using namespace relpos;

int main(int argc, char** argv) {
    const std::size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1182976;  // the Multi30k quickstart's Shaw model
    const int repeats = argc > 2 ? std::atoi(argv[2]) : 50;
    DistributedSession session;
    Communicator& comm = world();
    // Parameters of 64 Ki floats each, every one with a gradient, as after a backward pass.
    nn::NamedParams<float> params;
    for (std::size_t done = 0; done < n;) {
        const std::size_t k = std::min<std::size_t>(65536, n - done);
        Var<float> p(zeros<float>({k}), true);
        p.node()->grad_buf();
        params.push_back({fmt::format("p{}", params.size()), p});
        done += k;
    }
    GradientSum sum(comm, params);
    std::vector<float> extras{1.0f};
    sum.run(extras);  // warm-up: buffers, connections
    std::vector<double> ms;
    for (int r = 0; r < repeats; ++r) {
        double t = 0;
        comm.sum(&t, 1);  // start together
        const auto t0 = std::chrono::steady_clock::now();
        sum.run(extras);
        ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(ms.begin(), ms.end());
    if (comm.is_root())
        fmt::print("{} ranks, {} floats ({:.1f} MB) in {} buckets: median {:.2f} ms, best {:.2f} ms, worst {:.2f} ms over {} sums\n",
                   comm.size(), n, n * 4e-6, sum.buckets(), ms[ms.size() / 2], ms.front(), ms.back(), repeats);
    return 0;
}
