// Checkpoints: every parameter and the optimiser state as .npy files (readable by numpy.load) plus
// a manifest and the training state as JSON, written atomically (a temporary directory renamed into
// place), so a kill at any moment leaves either the previous or the new checkpoint, never half of one.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "autodiff/tensor.hpp"
#include "nn/optim.hpp"

namespace relpos {

// A checkpoint that cannot be used (truncated file, other model shape): one clear sentence.
struct CheckpointError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// ---- .npy (format version 1.0, little-endian, C order)
void write_npy(const std::string& path, const Array<float>& a);
void write_npy(const std::string& path, const Array<double>& a);
void write_npy_u64(const std::string& path, const std::vector<std::uint64_t>& v);
// Reads a float32 or float64 array (converted to T). Throws CheckpointError naming the file.
template <class T>
Array<T> read_npy(const std::string& path);
std::vector<std::uint64_t> read_npy_u64(const std::string& path);

// Training progress saved with the weights.
struct TrainProgress {
    std::uint64_t step = 0;            // optimiser steps done
    std::uint64_t epoch = 0;           // current epoch (0-based)
    std::uint64_t batch_in_epoch = 0;  // batches of the current epoch already consumed
    std::uint64_t tokens = 0;          // target tokens seen
    double best_valid_loss = 1e300;
    std::uint64_t best_step = 0;       // step of the best validation loss
    std::uint64_t bad_validations = 0; // validations in a row without an improvement > train.stop.min_delta
    double plateau_reference = 1e300; // stop.rule improvement: the loss of the last validation that counted
    // Competence target (train.stop.target_metric): the metric at the best checkpoint, and the first step
    // whose validation reached the target (0: not yet).
    double best_target_metric = -1e300;
    std::uint64_t target_step = 0;
    double elapsed_seconds = 0;        // training wall time so far (across resumes)
    // CPU time of the training so far (across resumes; parallel::cpu_seconds: the run's threads, core-seconds),
    // < 0 when not recorded for all of it (resumed from a checkpoint written before it was, or an MPI run,
    // whose other ranks' time rank 0 does not see)
    double cpu_seconds = 0;
    std::array<std::uint64_t, 6> dropout_rng{};
    std::string config_hash;
    // The machines this run trained on (Trainer::set_machine), in the order they first trained it, across
    // resumes: a run resumed in another session may continue on another CPU, and its numbers are then those
    // of both machines' kernels.
    std::vector<std::string> machines;
};

// The first entry of `machines` for a run resumed from a checkpoint written before machines were recorded
// ("not recorded (steps 1-N)"), and the test the report uses to leave it out of its list of machines.
std::string machines_not_recorded(std::uint64_t steps);
bool is_machines_not_recorded(const std::string& entry);

// Writes params (+ optimiser moments when adam != nullptr) and progress to `dir` atomically.
void save_checkpoint(const std::string& dir, const nn::NamedParams<float>& params, const nn::Adam<float>* adam,
                     const TrainProgress& progress);
// Loads into existing parameters (shapes must match: errors name the parameter and both shapes).
// Returns the progress; restores the optimiser moments when adam != nullptr.
TrainProgress load_checkpoint(const std::string& dir, const nn::NamedParams<float>& params, nn::Adam<float>* adam);
bool checkpoint_exists(const std::string& dir);
// Checks, without loading anything, that the checkpoint in `dir` (or its .old copy) is complete and fits
// `params`: state.json readable, every .npy present with the right shape and exactly the bytes its
// header announces (with_optimizer: the Adam moments too). Returns its progress. Throws CheckpointError
// with the same sentences as load_checkpoint.
TrainProgress verify_checkpoint(const std::string& dir, const nn::NamedParams<float>& params, bool with_optimizer);


}  // namespace relpos
