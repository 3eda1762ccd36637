// The MPI communicator (built only with the CMake option RELPOS_MPI; docs/distributed.md).
//
// Only the main thread calls MPI (MPI_THREAD_FUNNELED): a data-parallel run trains one sweep point at a
// time on the thread that started MPI. Waits poll the request and sleep between polls instead of
// spinning: while rank 0 alone validates, decodes or writes a checkpoint the others wait for it, and a
// spinning wait would take a core from it (or from the other runs on the machine).
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <thread>

#include "experiments/train/distributed.hpp"

namespace relpos {

namespace {

void wait_politely(MPI_Request& req) {
    const auto t0 = std::chrono::steady_clock::now();
    int done = 0;
    MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    while (!done) {
        // For the first 20 ms, poll and yield the core between polls: each MPI_Test moves a non-blocking sum
        // on by a round, ranks in step finish well within that, and a core shared with another process
        // (more ranks than cores) goes to it meanwhile. Then 1 ms between polls (rank 0 validating or decoding).
        if (std::chrono::steady_clock::now() - t0 > std::chrono::milliseconds(20))
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        else
            std::this_thread::yield();
        MPI_Test(&req, &done, MPI_STATUS_IGNORE);
    }
}

class MpiCommunicator final : public Communicator {
public:
    MpiCommunicator() {
        int provided = 0;
        MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
        // Errors abort the job (MPI's default), so a lost rank ends every process instead of a hang.
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
        MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
        MPI_Comm_size(MPI_COMM_WORLD, &size_);
    }
    ~MpiCommunicator() override { MPI_Finalize(); }
    int rank() const override { return rank_; }
    int size() const override { return size_; }

    std::unique_ptr<Pending> start_sum(float* data, std::size_t n) override {
        auto p = std::make_unique<Request>();
        MPI_Iallreduce(MPI_IN_PLACE, data, count(n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &p->req);
        return p;
    }
    void sum(double* data, std::size_t n) override {
        MPI_Request req;
        MPI_Iallreduce(MPI_IN_PLACE, data, count(n), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &req);
        wait_politely(req);
    }
    void broadcast(void* data, std::size_t bytes) override {
        // In pieces of at most 1 GiB: MPI counts are ints.
        auto* p = static_cast<char*>(data);
        for (std::size_t off = 0; off < bytes; off += kPiece) {
            MPI_Request req;
            MPI_Ibcast(p + off, count(std::min(kPiece, bytes - off)), MPI_BYTE, 0, MPI_COMM_WORLD, &req);
            wait_politely(req);
        }
    }
    [[noreturn]] void abort(int code) override {
        MPI_Abort(MPI_COMM_WORLD, code);
        std::_Exit(code);
    }

private:
    static constexpr std::size_t kPiece = std::size_t(1) << 30;
    static int count(std::size_t n) {
        if (n > std::size_t(INT32_MAX)) throw std::length_error("an MPI message of more than 2^31 elements");
        return static_cast<int>(n);
    }
    struct Request final : Pending {
        MPI_Request req = MPI_REQUEST_NULL;
        void wait() override { wait_politely(req); }
        void poke() override {
            int done = 0;
            if (req != MPI_REQUEST_NULL) MPI_Test(&req, &done, MPI_STATUS_IGNORE);
        }
    };
    int rank_ = 0, size_ = 1;
};

}  // namespace

std::unique_ptr<Communicator> start_mpi() { return std::make_unique<MpiCommunicator>(); }

}  // namespace relpos
