// One run directory: train a sweep point (or resume it), evaluate its best checkpoint through its task and
// write results.json. Under MPI, rank 0 orders the other ranks to train the same point with it.
//
// results/<name>/runs/<id>/config.yaml     the point's resolved config
//                         /metrics.jsonl   one JSON object per training step / validation
//                         /checkpoints/{last,best}/  .npy parameters + manifest + state
//                         /hyp.<split>.txt detokenized hypotheses, one per source line
//                         /results.json    final metrics (its presence marks the run finished)
//                         /log.txt         what the run printed
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>

#include "experiments/run/progress.hpp"
#include "experiments/run/sweep.hpp"
#include "experiments/tasks/task.hpp"
#include "experiments/train/distributed.hpp"

namespace relpos {

struct PointContext {
    const SweepPoint* point;
    std::filesystem::path run_dir;
    std::size_t ordinal, total;
    int threads;
    // run_dir is the finished run of the same config under another stop, found by the caller (EquivalentIndex
    // in a run store; is_equivalent for runs/<id> without one)
    bool equivalent = false;
};

// Trains and evaluates one point. Returns 0 (done or skipped), 3 (non-finite), 130 (interrupted).
int run_point(const PointContext& pc, const Dataset& data, Progress& progress);

// ---- data-parallel runs (docs/distributed.md). Rank 0 runs the experiment as one process would; for each
// point it trains it sends the other ranks an order: the point's index among the selected points, the
// vocabulary size and longest sequences (to build the same model), then the training examples (a rank
// needs neither the data files nor the subword cache). The Trainer then sends the parameters and state
// it starts from. {kAllDone, exit code} ends the others' loop.
constexpr std::uint64_t kAllDone = ~std::uint64_t(0);
void order_point(Communicator& comm, std::size_t index, const Dataset& data);
void order_all_done(Communicator& comm, int code);

}  // namespace relpos
