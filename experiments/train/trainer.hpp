// The training loop: token-budget batches, Adam with the inverse-square-root schedule, label
// smoothing, optional gradient clipping, periodic validation loss, atomic checkpoints (last and best)
// and exact resumption (same batch order and dropout stream as an uninterrupted run).
#pragma once

#include <atomic>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "experiments/data/batching.hpp"
#include "experiments/train/checkpoint.hpp"
#include "experiments/train/distributed.hpp"
#include "experiments/config/config.hpp"
#include "nn/transformer.hpp"

namespace relpos {

// A non-finite loss or gradient with train.on_nonfinite = stop.
struct NonFiniteError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Set by SIGINT/SIGTERM handlers: the trainer checkpoints and returns at the next step boundary.
extern std::atomic<bool> g_stop_requested;
void install_stop_handlers();

struct EvalLoss {
    double loss = 0;     // mean negative log-likelihood per target token (no label smoothing)
    double ppl = 0;      // exp(loss)
    double accuracy = 0; // next-token accuracy (teacher forcing)
    std::size_t tokens = 0;
};
// The batch layout a model family reads.
Layout batch_layout(nn::Family f);
// Logits (B, Lt, V) of a batch for any model family (teacher forcing for the decoders).
Var<float> batch_logits(const nn::Transformer<float>& model, const Batch& b);

// The training loss of a batch: cross-entropy with label smoothing, the mean over `mean_over` target tokens
// (0: over the batch's own; a data-parallel rank's share is averaged over the whole batch's tokens, so
// the ranks' gradients add up to the whole batch's).
Var<float> batch_loss(const nn::Transformer<float>& model, const Batch& b, double label_smoothing,
                      std::size_t mean_over = 0);

// scored_only (decoder-only models): compute the top layer and the projection only at the positions that
// have a target (Transformer::forward_causal_rows); the same numbers up to float rounding (the matrix
// products run over fewer rows), with much less work when most of a window is context.
EvalLoss evaluate_loss(const nn::Transformer<float>& model, const std::vector<Example>& data, std::size_t batch_tokens,
                       bool scored_only = false);

// The plateau rule's bookkeeping for one validation loss (train.stop.rule, min_delta): counts it as an
// improvement (pr.bad_validations = 0, the rule's reference moves) or not (++pr.bad_validations). The
// caller then moves pr.best_valid_loss with its best checkpoint.
void count_validation(const TrainConfig& cfg, double loss, TrainProgress& pr);

// Progress sink: a live line on a terminal, plain lines otherwise (see experiments/cli/progress.hpp).
struct TrainStatus {
    std::uint64_t step, epoch, epochs;
    std::uint64_t max_steps;  // 0 when the epochs bound the run
    double loss, lr, tokens_per_second, eta_seconds;
};

struct TrainOutcome {
    TrainProgress progress;
    bool interrupted = false;   // stopped by SIGINT/SIGTERM (checkpoint written)
    bool time_limited = false;  // stopped by train.time_limit_minutes
    // Why training ended: "plateau" (train.stop), "max_steps", "epochs" or "time_limit".
    std::string stop_reason;
};

// Extra validation metrics (e.g. greedy BLEU of the validation split), logged beside the loss.
using ValidationExtra = std::function<std::vector<std::pair<std::string, double>>()>;

class Trainer {
public:
    // run_dir/checkpoints/{last,best} and run_dir/metrics.jsonl are written.
    Trainer(nn::Transformer<float>& model, const std::vector<Example>& train, const std::vector<Example>& valid,
            const TrainConfig& cfg, std::uint64_t seed, std::string run_dir, std::string config_hash);
    TrainOutcome run(const std::function<void(const TrainStatus&)>& on_status = {},
                     const std::function<void(const std::string&)>& log = {});

    // For tests of non-finite handling: poisons the loss at this step (1-based); 0 = off.
    void inject_nonfinite_at(std::uint64_t step) { inject_step_ = step; }
    // Called at every validation (model in eval mode); its metrics go into the validation line.
    void set_validation_extra(ValidationExtra fn) { extra_ = std::move(fn); }
    // The validation split's name (data.valid_split): a competence target's metric is logged by the task
    // as <name>.<metric> among the validation extras.
    void set_valid_split_name(std::string name) { valid_split_name_ = std::move(name); }
    // Data-parallel training (docs/distributed.md): this process is one of comm.size() ranks that train the
    // same run together, each on its share of every batch. Rank 0 alone reads and writes run_dir and
    // validates; the others start from its parameters and state and write nothing.
    void distribute(Communicator& comm) { comm_ = &comm; }
    // The machine this process trains on (run/provenance.hpp's machine_description()): added to the
    // progress's list of machines (TrainProgress::machines) when it is not there yet, so that a run resumed
    // on another machine says so in its checkpoints and results.
    void set_machine(std::string machine) { machine_ = std::move(machine); }

private:
    void append_metric(const std::string& json_line);
    nn::Transformer<float>& model_;
    const std::vector<Example>& train_;
    const std::vector<Example>& valid_;
    TrainConfig cfg_;
    std::string machine_;
    std::uint64_t seed_;
    std::string run_dir_, config_hash_;
    std::uint64_t inject_step_ = 0;
    ValidationExtra extra_;
    std::string valid_split_name_ = "val";
    Communicator* comm_ = &single_process();
};

}  // namespace relpos
