// Data-parallel training across processes (docs/distributed.md): the seam between the trainer and MPI.
//
// The trainer and the runner see only `Communicator`. The single-process one is always built in; the MPI
// one (distributed_mpi.cpp) only with the CMake option RELPOS_MPI (distributed_none.cpp stands in for it
// otherwise), so the default build needs no MPI and no file outside those two names MPI.
//
// Under `mpirun -np N relpos run ...` every rank trains the same run: each takes a disjoint share of every
// batch, the gradients are summed over ranks (GradientSum) and every rank applies the same Adam step; rank 0
// alone reads and writes the run directory and sends the others what they need (the training examples,
// the parameters and optimiser state it starts or resumes from).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "experiments/data/example.hpp"
#include "experiments/train/checkpoint.hpp"
#include "nn/optim.hpp"

namespace relpos {

class Communicator {
public:
    virtual ~Communicator() = default;
    virtual int rank() const = 0;
    virtual int size() const = 0;
    bool is_root() const { return rank() == 0; }

    // An in-place elementwise sum over ranks that is under way; wait() completes it.
    class Pending {
    public:
        virtual ~Pending() = default;
        virtual void wait() = 0;
        // Moves the sum on without waiting (an MPI implementation progresses it only inside its calls).
        virtual void poke() = 0;
    };
    // Starts summing `n` floats over ranks in place; every rank ends with the same sums.
    virtual std::unique_ptr<Pending> start_sum(float* data, std::size_t n) = 0;
    // Sums in place over ranks and returns when done.
    virtual void sum(double* data, std::size_t n) = 0;
    // Copies rank 0's `bytes` bytes at `data` to every other rank.
    virtual void broadcast(void* data, std::size_t bytes) = 0;
    // Ends every process of the job with this exit code. Called when this rank failed, so that the others
    // stop instead of waiting forever in their next collective.
    [[noreturn]] virtual void abort(int code) = 0;
};

// The communicator of this process: MPI's world when relpos was built with RELPOS_MPI and started by
// mpirun or srun with more than one process, a single-process one otherwise.
Communicator& world();
// The communicator of a process that trains alone (every collective is the identity).
Communicator& single_process();

// Starts MPI when this process was launched as one of several ranks (mpirun, srun --mpi=pmix) and stops it
// when destroyed; otherwise world() stays the single-process communicator. Throws ConfigError when mpirun
// started several copies of a relpos built without MPI (each would train the whole run on its own).
class DistributedSession {
public:
    DistributedSession();
    ~DistributedSession();
    DistributedSession(const DistributedSession&) = delete;
    DistributedSession& operator=(const DistributedSession&) = delete;
};

// "rank 1 of 4: " on a rank other than 0 of a job with several ranks; "" otherwise (messages of rank 0
// read as in a single process).
std::string rank_prefix();

// Sums every parameter's gradient over the ranks, in buckets of about `bucket_floats` floats (parameters
// in reverse order: the last layers' gradients are the first that backward completes). A bucket goes on
// the wire as soon as backward has completed all of its parameters (`leaf_done`, from
// Var::backward(LeafDone)), while backward goes on with the earlier layers; buckets start in the same
// order on every rank, as MPI requires. A parameter that has no gradient on any rank keeps none (Adam
// skips it, as in a single process); one that has a gradient on some rank gets the sum (a rank with an
// empty share contributes zeros).
//
//   sum.start();  loss.backward([&](const Node<float>& p) { sum.leaf_done(p); });  sum.finish(extras);
class GradientSum {
public:
    static constexpr std::size_t kDefaultBucketFloats = std::size_t(1) << 20;  // 4 MiB
    GradientSum(Communicator& comm, nn::NamedParams<float> params, std::size_t bucket_floats = kDefaultBucketFloats);
    void start();
    void leaf_done(const Node<float>& param);
    // Sends what backward did not, the extras (e.g. each rank's share of the loss) with them, waits for
    // every sum and writes the sums into the gradients (and extras).
    void finish(std::vector<float>& extras);
    // start() and finish(): everything sent after backward.
    void run(std::vector<float>& extras);
    std::size_t buckets() const { return buckets_.size(); }
    // Buckets that went on the wire during backward in the last step (the rest went in finish()).
    std::size_t sent_during_backward() const { return sent_early_; }

private:
    struct Bucket {
        std::size_t first, last;  // parameters [first, last)
        std::vector<float> buf;
        std::size_t missing = 0;  // parameters backward has not completed yet
    };
    void send(Bucket& b);
    Communicator& comm_;
    nn::NamedParams<float> params_;
    std::vector<Bucket> buckets_;
    std::vector<std::size_t> bucket_of_;                      // parameter -> bucket
    std::unordered_map<const Node<float>*, std::size_t> index_;  // parameter node -> parameter
    std::vector<float> meta_;  // one has-gradient flag per parameter, then the extras
    std::vector<std::unique_ptr<Communicator::Pending>> pending_;
    std::size_t next_ = 0, sent_early_ = 0;  // the next bucket to send (in order)
};

// Broadcasts from rank 0: a vector's length, then its elements.
template <class T>
void broadcast_vector(Communicator& comm, std::vector<T>& v);
void broadcast_string(Communicator& comm, std::string& s);
// Rank 0's examples; the other ranks get a copy, rank 0 an empty vector.
std::vector<Example> broadcast_examples(Communicator& comm, const std::vector<Example>& on_root);
// Rank 0's parameters, Adam state (step count and moments) and training progress, to every rank: the
// start (fresh or resumed) of a data-parallel run.
void broadcast_training_state(Communicator& comm, const nn::NamedParams<float>& params, nn::Adam<float>& adam,
                              TrainProgress& progress);

// The MPI communicator when this process was launched as one of several MPI ranks, else nullptr.
// Implemented by distributed_mpi.cpp (RELPOS_MPI=ON) or distributed_none.cpp.
std::unique_ptr<Communicator> start_mpi();
// Ranks of the job that launched this process according to the launcher's environment (Open MPI's
// mpirun, PMIx or PMI as under srun); 1 when none did.
int launched_ranks();

}  // namespace relpos
