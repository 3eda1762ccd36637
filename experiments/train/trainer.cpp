#include "experiments/train/trainer.hpp"
#include "experiments/util/files.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include <fmt/format.h>

#include "autodiff/parallel.hpp"
#include "experiments/data/corpus.hpp"
#include "experiments/data/json.hpp"
#include "nn/optim.hpp"

namespace relpos {

namespace fs = std::filesystem;

std::atomic<bool> g_stop_requested{false};

void install_stop_handlers() {
    auto h = [](int) { g_stop_requested.store(true); };
    std::signal(SIGINT, h);
    std::signal(SIGTERM, h);
}

Layout batch_layout(nn::Family f) {
    switch (f) {
        case nn::Family::DecoderOnly: return Layout::DecoderOnly;
        case nn::Family::EncoderOnly: return Layout::EncoderOnly;
        default: return Layout::Seq2Seq;
    }
}

Var<float> batch_logits(const nn::Transformer<float>& model, const Batch& b) {
    if (model.config().family == nn::Family::DecoderOnly) return model.forward_causal(b.tgt_in, b.B, b.Lt);
    if (model.config().family == nn::Family::EncoderOnly) return model.forward_bidirectional(b.tgt_in, b.B, b.Lt);
    auto mask = model.padding_mask(b.src, b.B, b.Ls);
    Var<float> mem = model.encode(b.src, b.B, b.Ls, mask);
    return model.decode(b.tgt_in, b.B, b.Lt, mem, mask);
}

Var<float> batch_loss(const nn::Transformer<float>& model, const Batch& b, double label_smoothing, std::size_t mean_over) {
    Var<float> logits = batch_logits(model, b);
    CrossEntropyOptions o;
    o.ignore_index = PAD_ID;
    o.label_smoothing = label_smoothing;
    o.mean_over = mean_over;
    return cross_entropy(logits, b.tgt_out, o);  // mean over target tokens
}

EvalLoss evaluate_loss(const nn::Transformer<float>& model, const std::vector<Example>& data, std::size_t batch_tokens,
                       bool scored_only) {
    NoGradGuard ng;
    EvalLoss r;
    if (data.empty()) return r;
    BatchOptions bo;
    bo.max_tokens = batch_tokens;
    bo.layout = batch_layout(model.config().family);
    bo.one_length = model.eval_batches_by_length();
    scored_only = scored_only && model.config().family == nn::Family::DecoderOnly;
    double nll = 0;
    std::size_t correct = 0;
    std::vector<std::int32_t> rows, targets;
    for (const Batch& b : eval_batches(data, bo)) {
        Var<float> logits;
        const std::vector<std::int32_t>* want = &b.tgt_out;
        if (scored_only) {  // the rows with a target, in order: the loss sums the same rows in the same order
            rows.clear();
            targets.clear();
            for (std::size_t i = 0; i < b.tgt_out.size(); ++i)
                if (b.tgt_out[i] != PAD_ID) rows.push_back(static_cast<std::int32_t>(i)), targets.push_back(b.tgt_out[i]);
            logits = model.forward_causal_rows(b.tgt_in, b.B, b.Lt, rows);
            want = &targets;
        } else {
            logits = batch_logits(model, b);
        }
        CrossEntropyOptions o;
        o.ignore_index = PAD_ID;
        o.mean = false;
        nll += cross_entropy(logits, *want, o).item();
        const std::size_t V = logits.shape().back();
        const float* p = logits.data();
        for (std::size_t i = 0; i < want->size(); ++i) {
            if ((*want)[i] == PAD_ID) continue;
            const auto best = std::max_element(p + i * V, p + (i + 1) * V) - (p + i * V);
            correct += best == (*want)[i];
        }
        r.tokens += b.n_tgt_tokens;
    }
    r.loss = nll / double(r.tokens);
    r.ppl = std::exp(r.loss);
    r.accuracy = double(correct) / double(r.tokens);
    return r;
}

Trainer::Trainer(nn::Transformer<float>& model, const std::vector<Example>& train, const std::vector<Example>& valid,
                 const TrainConfig& cfg, std::uint64_t seed, std::string run_dir, std::string config_hash)
    : model_(model), train_(train), valid_(valid), cfg_(cfg), seed_(seed), run_dir_(std::move(run_dir)),
      config_hash_(std::move(config_hash)) {}

void Trainer::append_metric(const std::string& line) {
    if (!comm_->is_root()) return;
    const fs::path file = fs::path(run_dir_) / "metrics.jsonl";
    std::ofstream f(file, std::ios::app);
    f << line << '\n';
    f.close();
    if (!f) throw WriteError(fmt::format("cannot append to {} (disk full?)", file.string()));
}

namespace {
// Keeps only metric lines up to `step` (a resumed run rewrites what came after its checkpoint).
void truncate_metrics(const fs::path& file, std::uint64_t step) {
    if (!fs::exists(file)) return;
    std::ifstream in(file);
    std::vector<std::string> keep;
    std::string line;
    while (std::getline(in, line)) {
        const Json j = Json::parse(line, nullptr, false);
        if (!j.is_object() || !j.contains("step") || !j["step"].is_number_unsigned()) continue;
        if (j["step"].get<std::uint64_t>() <= step) keep.push_back(line);
    }
    in.close();
    std::string text;
    for (auto& l : keep) text += l + '\n';
    write_file_atomic(file, text);
}
}  // namespace

void count_validation(const TrainConfig& cfg, double loss, TrainProgress& pr) {
    // An improvement counts only when it beats the reference by more than min_delta. stop.rule improvement:
    // the reference is the last loss that counted (it moves only then); running_best: the lowest loss so
    // far (pr.best_valid_loss before this validation), which any improvement moves.
    const double reference = cfg.stop_rule == "running_best" ? pr.best_valid_loss : pr.plateau_reference;
    if (loss < reference - cfg.min_delta) {
        pr.bad_validations = 0;
        pr.plateau_reference = loss;
    } else {
        ++pr.bad_validations;
    }
}

TrainOutcome Trainer::run(const std::function<void(const TrainStatus&)>& on_status,
                          const std::function<void(const std::string&)>& log) {
    auto say = [&](const std::string& s) {
        if (log) log(s);
    };
    const auto named = model_.named_parameters();
    nn::AdamOptions ao;
    ao.beta1 = cfg_.adam_beta1;
    ao.beta2 = cfg_.adam_beta2;
    ao.eps = cfg_.adam_eps;
    nn::Adam<float> adam(named, ao);
    const fs::path ckdir = fs::path(run_dir_) / "checkpoints";
    const std::string last_dir = (ckdir / "last").string(), best_dir = (ckdir / "best").string();
    // Data-parallel: rank 0 alone touches run_dir; every rank trains on its share of each batch.
    Communicator& comm = *comm_;
    const bool root = comm.is_root();
    const std::size_t ranks = static_cast<std::size_t>(comm.size()), rank = static_cast<std::size_t>(comm.rank());
    std::optional<GradientSum> gradient_sum;
    if (ranks > 1) gradient_sum.emplace(comm, named);
    double sum_seconds = 0;  // in gradient sums: on the wire, or waiting for the slowest rank

    TrainOutcome out;
    TrainProgress& pr = out.progress;
    if (root) {
        fs::create_directories(ckdir);
        if (checkpoint_exists(last_dir) || checkpoint_exists(last_dir + ".old")) {
            pr = load_checkpoint(last_dir, named, &adam);
            model_.dropout_rng().set_state(pr.dropout_rng);
            truncate_metrics(fs::path(run_dir_) / "metrics.jsonl", pr.step);
            say(fmt::format("resuming from step {} (epoch {}, batch {})", pr.step, pr.epoch + 1, pr.batch_in_epoch));
        } else {
            fs::remove(fs::path(run_dir_) / "metrics.jsonl");
        }
    }
    if (ranks > 1) broadcast_training_state(comm, named, adam, pr);  // the same start on every rank
    pr.config_hash = config_hash_;
    if (!machine_.empty()) {
        if (pr.machines.empty() && pr.step > 0)  // a checkpoint written before machines were recorded
            pr.machines.push_back(machines_not_recorded(pr.step));
        if (std::find(pr.machines.begin(), pr.machines.end(), machine_) == pr.machines.end())
            pr.machines.push_back(machine_);
    }
    model_.train();

    BatchOptions bo;
    bo.max_tokens = static_cast<std::size_t>(cfg_.batch_tokens);
    bo.seed = seed_;
    bo.layout = batch_layout(model_.config().family);
    const std::uint64_t epochs = static_cast<std::uint64_t>(cfg_.epochs);
    const std::uint64_t max_steps = static_cast<std::uint64_t>(cfg_.max_steps);
    const auto t_start = std::chrono::steady_clock::now();
    const double elapsed0 = pr.elapsed_seconds;
    auto elapsed = [&] {
        return elapsed0 + std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
    };
    if (ranks > 1) pr.cpu_seconds = -1;  // rank 0 does not see the other ranks' CPU time
    const double cpu0 = pr.cpu_seconds, cpu_start = parallel::cpu_seconds();
    auto cpu = [&] { return cpu0 < 0 ? -1.0 : cpu0 + (parallel::cpu_seconds() - cpu_start); };
    std::size_t batches_per_epoch = 0;
    std::uint64_t window_batches = 0;
    auto window_t0 = std::chrono::steady_clock::now();
    std::uint64_t window_tok_count = 0;

    std::uint64_t last_saved_step = pr.step;
    auto save_last = [&] {
        if (!root) return;
        pr.dropout_rng = model_.dropout_rng().state();
        pr.elapsed_seconds = elapsed();
        pr.cpu_seconds = cpu();
        save_checkpoint(last_dir, named, &adam, pr);
        last_saved_step = pr.step;
    };
    const std::uint64_t patience = static_cast<std::uint64_t>(cfg_.patience);
    const bool has_target = !cfg_.target_metric.empty();
    const std::string target_key = valid_split_name_ + "." + cfg_.target_metric;  // as the task logs it
    auto reached = [&] { return has_target && pr.target_step > 0; };
    // Ends the run: the plateau, or the competence target (both found by a validation).
    auto plateaued = [&] { return (patience > 0 && pr.bad_validations >= patience) || reached(); };
    std::uint64_t validated_at = std::numeric_limits<std::uint64_t>::max();  // this session's last validation
    auto validate = [&] {
        if (!root) return;  // the others learn what matters for them (a plateau) through agree() below
        validated_at = pr.step;
        model_.eval();
        EvalLoss ev = evaluate_loss(model_, valid_, static_cast<std::size_t>(cfg_.batch_tokens));
        std::vector<std::pair<std::string, double>> extra;
        if (extra_) extra = extra_();
        model_.train();
        Json line = {{"step", pr.step},
                     {"epoch", pr.batch_in_epoch == 0 ? pr.epoch : pr.epoch + 1},
                     {"valid_loss", json_number(ev.loss, 6)},
                     {"valid_ppl", json_number(ev.ppl, 4)},
                     {"valid_accuracy", json_number(ev.accuracy, 5)}};
        std::string said;
        for (auto& [k, v] : extra) {
            line[k] = json_number(v, 4);
            said += fmt::format(", {} {:.2f}", k, v);
        }
        line["elapsed"] = json_number(elapsed(), 1);
        count_validation(cfg_, ev.loss, pr);
        // The best checkpoint follows the plain minimum of the loss, or with a competence target the
        // highest target metric (ties: the lower loss).
        bool best = ev.loss < pr.best_valid_loss;
        if (has_target) {
            const auto it = std::find_if(extra.begin(), extra.end(), [&](const auto& kv) { return kv.first == target_key; });
            if (it == extra.end())
                throw std::logic_error("train.stop.target_metric: the task computed no " + target_key + " at validation");
            const double m = it->second;
            best = m > pr.best_target_metric || (m == pr.best_target_metric && ev.loss < pr.best_valid_loss);
            if (best) pr.best_target_metric = m;
            if (m >= cfg_.target && pr.target_step == 0) pr.target_step = pr.step;
        }
        append_metric(json_line(line));
        say(fmt::format("step {}: validation loss {:.4f}, perplexity {:.2f}{}{}", pr.step, ev.loss, ev.ppl, said,
                        patience > 0 ? fmt::format(" (no improvement for {}/{})", pr.bad_validations, patience)
                                     : std::string()));
        if (best) {
            pr.best_valid_loss = ev.loss;
            pr.best_step = pr.step;
            pr.dropout_rng = model_.dropout_rng().state();
            pr.elapsed_seconds = elapsed();
            pr.cpu_seconds = cpu();
            save_checkpoint(best_dir, named, nullptr, pr);
        }
    };
    const bool step_limited = max_steps > 0;
    {
        // The inverse-square-root schedule peaks at `warmup` updates: a run shorter than that never
        // reaches the configured learning rate (the default warmup, 4000, is the paper's, for 100k updates).
        const std::uint64_t per_epoch = plan_train_batches(train_, bo, 0).size();
        const double total = step_limited ? double(std::min<std::uint64_t>(max_steps, epochs * per_epoch))
                                          : double(epochs * per_epoch);
        if (pr.step == 0 && total > 0 && double(cfg_.warmup) > total)
            say(fmt::format("warning: train.warmup ({}) is longer than the whole run ({:.0f} updates): the learning rate "
                            "never reaches its peak; set train.warmup below the run's length",
                            cfg_.warmup, total));
    }
    // The decisions that end or interrupt training are rank 0's (it validates and keeps the clock; a stop
    // signal to any rank counts), and every rank acts on them at the same step. One sum of three numbers
    // per step with several ranks; nothing with one.
    struct Verdict {
        bool plateau, stop_requested, time_up;
    };
    auto agree = [&](Verdict v) {
        if (ranks == 1) return v;
        double f[3] = {root && v.plateau ? 1.0 : 0.0, v.stop_requested ? 1.0 : 0.0, root && v.time_up ? 1.0 : 0.0};
        comm.sum(f, 3);
        return Verdict{f[0] > 0, f[1] > 0, f[2] > 0};
    };
    auto time_up = [&] { return cfg_.time_limit_minutes > 0 && elapsed() >= cfg_.time_limit_minutes * 60.0; };
    // A loss this far above a uniform guess (ln V nats per token) is a diverged model, not a spike.
    const double diverged_above = 10.0 * std::log(double(std::max<std::size_t>(2, model_.config().tgt_vocab)));
    bool stop = plateaued();  // a run resumed after its plateau was found trains no further
    while (!stop && pr.epoch < epochs && !(step_limited && pr.step >= max_steps)) {
        // The plan of epoch e depends only on (seed, e): resuming mid-epoch replays the same order.
        const auto plan = plan_train_batches(train_, bo, pr.epoch);
        batches_per_epoch = plan.size();
        for (std::size_t bi = pr.batch_in_epoch; bi < plan.size(); ++bi) {
            // With several ranks each trains on its share of the batch, its loss summed over its tokens and
            // divided by the whole batch's: the sum over ranks of the gradients is the whole batch's gradient.
            const Batch b = make_batch(train_, ranks > 1 ? batch_share(plan[bi], rank, ranks) : plan[bi], bo.layout);
            const std::size_t batch_tokens = ranks > 1 ? target_tokens(train_, plan[bi], bo.layout) : b.n_tgt_tokens;
            const std::uint64_t step = pr.step + 1;
            const double lr = nn::inverse_sqrt_lr(step, model_.config().dims.d_model,
                                                  static_cast<std::size_t>(cfg_.warmup), cfg_.lr);
            adam.zero_grad();
            // Each rank's dropout masks (and sampled positions) come from its own stream, a function of (seed,
            // step, rank) so that a resume continues it; with one rank, the checkpointed stream as ever.
            if (ranks > 1) model_.dropout_rng().reseed(seed_ ^ (step * 0x9E3779B97F4A7C15ull) ^ ((rank + 1) << 48));
            double lval = 0;
            if (gradient_sum) gradient_sum->start();
            if (b.B > 0) {  // a share is empty when the batch has fewer rows than there are ranks
                Var<float> loss = batch_loss(model_, b, cfg_.label_smoothing, ranks > 1 ? batch_tokens : 0);
                if (inject_step_ == step) {  // test hook: one poisoned step
                    loss.value().data()[0] = std::numeric_limits<float>::quiet_NaN();
                    inject_step_ = 0;
                }
                lval = loss.item();
                if (gradient_sum)  // each bucket of gradients is summed as soon as backward completes it
                    loss.backward([&](const Node<float>& p) { gradient_sum->leaf_done(p); });
                else
                    loss.backward();
            }
            if (gradient_sum) {  // the whole batch's gradient and loss, the same on every rank
                const auto t0 = std::chrono::steady_clock::now();
                std::vector<float> shares{float(lval)};
                gradient_sum->finish(shares);
                lval = shares[0];
                sum_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            }
            const double gnorm = cfg_.clip_norm > 0 ? nn::clip_grad_norm(named, cfg_.clip_norm) : nn::grad_norm(named);
            if (!std::isfinite(lval) || !std::isfinite(gnorm) || lval > diverged_above) {
                const std::string what =
                    !std::isfinite(lval)   ? fmt::format("the loss is {}", lval)
                    : !std::isfinite(gnorm) ? fmt::format("the gradient norm is {}", gnorm)
                                            : fmt::format("the loss is {:.4g}, more than 10 x ln(vocabulary) = {:.1f}: "
                                                          "training diverged (lower train.lr)", lval, diverged_above);
                if (cfg_.on_nonfinite == "stop") {
                    const std::string kept = root && checkpoint_exists(last_dir)
                                                 ? fmt::format("the last good checkpoint (step {}) is kept in {}", last_saved_step, last_dir)
                                                 : std::string("no checkpoint had been written yet");
                    throw NonFiniteError(fmt::format("training stopped at step {} (epoch {}): {}; {} "
                                                     "(set train.on_nonfinite: skip to skip such steps)",
                                                     step, pr.epoch + 1, what, kept));
                }
                say(fmt::format("step {}: {}; step skipped (train.on_nonfinite: skip)", step, what));
                append_metric(json_line(Json{{"step", step}, {"skipped_nonfinite", true}}));
                pr.batch_in_epoch = bi + 1;
                continue;
            }
            adam.step(lr);
            pr.step = step;
            pr.batch_in_epoch = bi + 1;
            pr.tokens += batch_tokens;
            ++window_batches;
            window_tok_count += batch_tokens;
            // One line per step: the loss curve is part of what a resumed run must reproduce exactly.
            append_metric(json_line(Json{{"step", pr.step},
                                         {"epoch", pr.epoch + 1},
                                         {"train_loss", json_number(lval, 6)},
                                         {"lr", json_significant(lr, 6)},
                                         {"grad_norm", json_number(gnorm, 4)},
                                         {"tokens", batch_tokens},
                                         {"elapsed", json_number(elapsed(), 2)}}));
            if (on_status && (pr.step % 10 == 0 || bi + 1 == plan.size())) {
                const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - window_t0).count();
                const double tps = dt > 0 ? double(window_tok_count) / dt : 0;
                const double total = step_limited ? double(max_steps) : double(epochs) * double(batches_per_epoch);
                const double done = step_limited ? double(pr.step)
                                                 : double(pr.epoch) * double(batches_per_epoch) + double(bi + 1);
                const double sec_per_batch = dt / std::max(1.0, double(window_batches));
                double eta = std::max(0.0, total - done) * sec_per_batch;
                if (cfg_.time_limit_minutes > 0) eta = std::min(eta, std::max(0.0, cfg_.time_limit_minutes * 60.0 - elapsed()));
                // Step-limited runs that end before their last epoch show the step bound instead.
                const bool steps_bind = step_limited && double(max_steps) < double(epochs) * double(batches_per_epoch);
                on_status({pr.step, pr.epoch + 1, epochs, steps_bind ? max_steps : 0, lval, lr, tps, eta});
                window_tok_count = 0;
                window_batches = 0;
                window_t0 = std::chrono::steady_clock::now();
            }
            const bool validated = cfg_.eval_every > 0 && pr.step % static_cast<std::uint64_t>(cfg_.eval_every) == 0;
            if (validated) validate();
            const Verdict v = agree({validated && plateaued(), g_stop_requested.load(), time_up()});
            if (v.plateau) {
                // The validation line is written; the checkpoint after the loop records the stop.
                pr.batch_in_epoch = bi + 1;
                stop = true;
                break;
            }
            // No periodic checkpoint on a step that ends the epoch or the run: the end-of-epoch validation
            // is written first and its checkpoint right after, so a kill between the two resumes from the
            // previous checkpoint and rewrites that validation line once (not twice).
            const bool ends_here = bi + 1 == plan.size() || (step_limited && pr.step >= max_steps) || v.time_up;
            if (!ends_here && cfg_.checkpoint_every > 0 && pr.step % static_cast<std::uint64_t>(cfg_.checkpoint_every) == 0)
                save_last();
            if (v.stop_requested) {
                save_last();
                out.interrupted = true;
                say(fmt::format("interrupted at step {}: checkpoint written to {}", pr.step, last_dir));
                return out;
            }
            if (v.time_up) {
                out.time_limited = true;
                stop = true;
                break;
            }
            if (step_limited && pr.step >= max_steps) {
                stop = true;
                break;
            }
        }
        const bool by_plateau = plateaued();  // found by the periodic validation just above
        if (!stop) {  // epoch finished
            ++pr.epoch;
            pr.batch_in_epoch = 0;
        }
        // (not twice at one step: a run whose last step is also a periodic validation step ends validated)
        if (!by_plateau && (cfg_.eval_every == 0 || stop) && validated_at != pr.step) validate();
        if (agree({plateaued(), false, false}).plateau) stop = true;
        save_last();
    }
    if (root && !checkpoint_exists(best_dir)) validate();  // e.g. epochs: 0
    if (gradient_sum)
        say(fmt::format("{} ranks: waiting for the gradient sums after backward took {:.1f} s of this session's {:.1f} s "
                        "(on the wire or waiting for the slowest rank; {} buckets of at most {:.1f} MiB, {} of them sent "
                        "during backward in the last step)",
                        ranks, sum_seconds, elapsed() - elapsed0, gradient_sum->buckets(),
                        GradientSum::kDefaultBucketFloats * 4.0 / (1 << 20), gradient_sum->sent_during_backward()));
    // The outcome below is rank 0's; the other ranks' callers do not read it.
    if (reached()) out.stop_reason = "target";
    else if (plateaued()) out.stop_reason = "plateau";
    else if (out.time_limited) out.stop_reason = "time_limit";
    else if (step_limited && pr.step >= max_steps) out.stop_reason = "max_steps";
    else out.stop_reason = "epochs";
    if (out.stop_reason == "target")
        say(fmt::format("validation {} reached the target {} at step {} (best step {})", cfg_.target_metric,
                        cfg_.target, pr.target_step, pr.best_step));
    if (out.stop_reason == "plateau")
        say(fmt::format("validation loss plateaued: no improvement > {} for {} validations; stopped at step {} "
                        "(best step {})", cfg_.min_delta, patience, pr.step, pr.best_step));
    if (out.time_limited) say(fmt::format("time limit of {} minutes reached at step {}", cfg_.time_limit_minutes, pr.step));
    return out;
}

}  // namespace relpos
