#include "experiments/run/run_one.hpp"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>

#include <fmt/format.h>

#include "experiments/data/json.hpp"
#include "experiments/run/continuation.hpp"
#include "experiments/tasks/metric_names.hpp"
#include "experiments/run/identity.hpp"
#include "experiments/run/provenance.hpp"
#include "experiments/run/store.hpp"
#include "experiments/tasks/task.hpp"
#include "experiments/train/model.hpp"
#include "experiments/train/trainer.hpp"
#include "experiments/util/files.hpp"
#include "experiments/util/system.hpp"

namespace relpos {

namespace fs = std::filesystem;

namespace {

class RunLog {
public:
    RunLog(const fs::path& file, Progress& progress, std::string prefix)
        : f_(file, std::ios::app), progress_(progress), prefix_(std::move(prefix)) {}
    void operator()(const std::string& s) {
        f_ << "[" << now_iso() << "] " << s << std::endl;
        progress_.message(prefix_ + s);
    }

private:
    std::ofstream f_;
    Progress& progress_;
    std::string prefix_;
};

// Encoder self-attention of the first validation sentence (last layer, mean over heads) as a
// whitespace matrix (query rows, key columns) for `relpos report`'s heat maps.
void write_attention_map(const nn::Transformer<float>& model, const Dataset& data, const fs::path& file) {
    const auto& ex = data.splits.at(data.valid_split).examples;
    if (ex.empty() || ex[0].src.empty()) return;
    NoGradGuard ng;
    const auto& src = ex[0].src;
    const std::size_t L = src.size();
    auto mask = model.padding_mask(src, 1, L);
    std::vector<Var<float>> w;
    model.encode(src, 1, L, mask, &w);
    if (w.empty()) return;
    const Array<float>& a = w.back().value();  // (1, H, L, L)
    const std::size_t H = a.shape()[1];
    std::string text;
    for (std::size_t i = 0; i < L; ++i) {
        for (std::size_t j = 0; j < L; ++j) {
            double m = 0;
            for (std::size_t h = 0; h < H; ++h) m += a(0, h, i, j);
            text += fmt::format("{}{:.5f}", j ? " " : "", m / double(H));
        }
        text += "\n";
    }
    write_file_atomic(file, text);
}

}  // namespace

void order_point(Communicator& comm, std::size_t index, const Dataset& data) {
    std::vector<std::uint64_t> order{index, data.vocab, data.longest_source, data.longest_target};
    broadcast_vector(comm, order);
    broadcast_examples(comm, data.train);
}

void order_all_done(Communicator& comm, int code) {
    std::vector<std::uint64_t> order{kAllDone, static_cast<std::uint64_t>(code)};
    broadcast_vector(comm, order);
}


int run_point(const PointContext& pc, const Dataset& data, Progress& progress) {
    const ExperimentConfig& cfg = pc.point->config;
    const std::string hash = config_hash(cfg);
    const fs::path results = pc.run_dir / "results.json";
    const std::string tag = fmt::format("run {}/{} {}: ", pc.ordinal, pc.total, pc.point->id);
    if (fs::exists(results)) {
        // A finished run is never redone or touched; a different config under the same id is an error.
        const bool own = !pc.equivalent && same_run(read_finished_run(results).config_hash, cfg);
        if (!own && !pc.equivalent)
            throw ConfigError(fmt::format(
                "{}: run {} already finished with a different configuration; use another experiment name or move "
                "{} away (finished runs are never overwritten)",
                cfg.source, pc.point->id, pc.run_dir.string()));
        progress.message(tag + (own ? std::string("finished earlier, skipped")
                                    : fmt::format("finished earlier as {} under another stop (it stopped before either "
                                                  "cap), skipped", pc.run_dir.filename().string())));
        return 0;
    }
    fs::create_directories(pc.run_dir);
    RunLock lock(pc.run_dir);
    if (!lock.held()) {
        progress.message(tag + fmt::format("is being trained by {} (lock {}); skipped here", lock.holder(),
                                           (pc.run_dir / ".lock").string()));
        return 0;
    }
    if (fs::exists(results)) {  // finished by another process while this one waited its turn
        progress.message(tag + "finished earlier, skipped");
        return 0;
    }
    const std::string last = (pc.run_dir / "checkpoints" / "last").string();
    bool resuming = checkpoint_exists(last) || checkpoint_exists(last + ".old");
    const fs::path continued_file = pc.run_dir / "continued_from";
    std::optional<Continuation> continued;
    std::vector<std::string> not_continued;  // capped runs of this config it could not continue, and why
    if (!resuming) {
        // A fresh start (a new run, or one killed before its first checkpoint, perhaps under another config):
        // nothing of an earlier attempt may leak into it, e.g. a best checkpoint that epochs: 0 would evaluate.
        fs::remove_all(pc.run_dir / "checkpoints");
        fs::remove(continued_file);
        write_file_atomic(pc.run_dir / "config.yaml", to_yaml(cfg));
        // ... unless a run of the same config but its stop is in the store: then this run is its continuation.
        continued = find_continuation(cfg, pc.run_dir, pc.threads, world().size(), &not_continued);
        if (continued) {
            std::optional<RunLock> source;  // an unfinished run must not train while it is copied
            if (continued->how == "interrupted") {
                source.emplace(continued->from);
                if (!source->held()) {
                    progress.message(tag + fmt::format("continues {}, which {} is training now; skipped here",
                                                       continued->from.string(), source->holder()));
                    return 0;
                }
            }
            write_file_atomic(continued_file, fmt::format("{} {} {}\n", continued->from.filename().string(),
                                                          continued->step, continued->how));
            start_from(*continued, pc.run_dir, hash);
            resuming = true;
        }
    }
    RunLog log(pc.run_dir / "log.txt", progress, tag);
    if (continued)
        log(fmt::format("continues {}, {}: its checkpoint, optimiser state and metrics (the same numbers as one run "
                        "of this config from step 0 on the machines it trained on)", continued->from.string(),
                        continued->said()));
    for (const auto& why : not_continued) log(fmt::format("starts from step 0, not continuing {}", why));
    if (data.subword && (!resuming || !fs::exists(pc.run_dir / "subword.model")))  // self-contained for eval/translate
        fs::copy_file(data.subword->model_path(), pc.run_dir / "subword.model", fs::copy_options::overwrite_existing);

    auto model = build_model(cfg, data.vocab, data.longest_source, data.longest_target);
    Communicator& comm = world();
    // Every start and resume names its machine and binary: a run resumed in another session may continue on
    // another CPU (results.json's trained_on lists them all).
    const std::string machine = machine_description();
    log(fmt::format("model: {} parameters; {} thread{}{}; {}; relpos {}", model->num_parameters(), pc.threads,
                    pc.threads == 1 ? "" : "s", comm.size() > 1 ? fmt::format(" on each of {} MPI ranks", comm.size()) : "",
                    machine, source_commit()));
    Trainer trainer(*model, data.train, data.splits.at(data.valid_split).examples, cfg.train,
                    static_cast<std::uint64_t>(cfg.seed), pc.run_dir.string(), hash);
    trainer.set_machine(machine);
    if (comm.size() > 1) {
        order_point(comm, pc.ordinal - 1, data);
        trainer.distribute(comm);
    }
    const auto task = make_task(cfg);
    trainer.set_valid_split_name(data.valid_split);
    if (cfg.train.valid_bleu || !cfg.train.target_metric.empty())
        trainer.set_validation_extra([&] { return task->validation_metrics(*model, data, cfg); });
    TrainOutcome outcome;
    try {
        outcome = trainer.run(
            [&](const TrainStatus& s) {
                // The bound that ends the run: max_steps when it comes before the last epoch.
                const std::string where = s.max_steps > 0 ? fmt::format("step {}/{} (epoch {})", s.step, s.max_steps, s.epoch)
                                                          : fmt::format("epoch {}/{} step {}", s.epoch, s.epochs, s.step);
                progress.status(fmt::format("{}{} loss {:.3f} lr {:.2e} {:.0f} tok/s ETA {}{}", tag, where, s.loss, s.lr,
                                            s.tokens_per_second, format_duration(s.eta_seconds),
                                            cfg.train.patience > 0 ? " (or earlier, at the plateau)" : ""));
            },
            [&](const std::string& s) { log(s); });
    } catch (const NonFiniteError& e) {
        log(e.what());
        return 3;
    }
    if (outcome.interrupted) return 130;

    // Evaluate the best checkpoint (lowest validation loss).
    const auto named = model->named_parameters();
    const std::string best = (pc.run_dir / "checkpoints" / "best").string();
    TrainProgress pr = outcome.progress;
    if (checkpoint_exists(best)) load_checkpoint(best, named, nullptr);
    model->eval();
    Json metrics = Json::object();
    std::map<std::string, std::string> sigs;
    for (const auto& split : cfg.eval.splits) {
        model->eval();  // each split from the start of the evaluation stream (randomized_eval: sample)
        const auto t0 = std::chrono::steady_clock::now();
        const auto m = task->evaluate(EvalRequest{*model, data, split, cfg, pc.run_dir.string(), &sigs,
                                                  [&](const std::string& s) { log(s); }});
        const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        std::string line;
        std::size_t curve = 0;  // loss-by-position figures: hundreds, in results.json rather than the log line
        for (auto& [k, v] : m) {
            metrics[split + "." + k] = json_number(v, 4);
            if (metric_names::is_loss_by_position(k)) ++curve;
            else line += fmt::format(" {} {:.2f}", k, v);
        }
        if (curve) line += fmt::format(" (and {} loss_pos figures, in results.json)", curve);
        log(fmt::format("{}:{} ({:.0f} s)", split, line, dt));
    }
    if (data.family == nn::Family::EncoderDecoder) write_attention_map(*model, data, pc.run_dir / "attention.tsv");
    Json json = {{"id", pc.point->id},
                 {"labels", pc.point->labels},
                 {"metrics", metrics},
                 {"signatures", sigs},
                 {"parameters", model->num_parameters()},
                 {"steps", pr.step},
                 {"epochs_completed", pr.epoch},
                 {"train_seconds", json_number(pr.elapsed_seconds, 1)},
                 {"best_valid_loss", json_number(pr.best_valid_loss, 6)},
                 {"best_step", pr.best_step},
                 {"stop_reason", outcome.stop_reason},
                 {"time_limited", outcome.time_limited},
                 {"seed", cfg.seed},
                 {"threads", pc.threads}};
    // core-seconds of training (its threads' CPU time), when measured from the first update: train_seconds is
    // wall time, which a busy machine stretches
    if (pr.cpu_seconds >= 0) json["train_cpu_seconds"] = json_number(pr.cpu_seconds, 3);  // ms: tiny test runs take 0.1 s
    if (!cfg.train.target_metric.empty())  // the competence gate: did the model learn its task in distribution?
        json["competence"] = {{"metric", data.valid_split + "." + cfg.train.target_metric},
                              {"target", cfg.train.target},
                              {"reached", pr.target_step > 0},
                              {"step", pr.target_step},
                              {"best", json_number(pr.best_target_metric, 4)}};
    if (comm.size() > 1) json["ranks"] = comm.size();
    {
        std::ifstream f(continued_file);
        std::string from, how = "max_steps";  // runs continued until 2026-12-06 continued capped runs only
        std::uint64_t step = 0;
        if (f >> from >> step) {
            f >> how;
            json["continued_from"] = {{"run", from}, {"step", step}, {"stop", how}};
        }
    }
    json["config_hash"] = hash;
    json["commit"] = source_commit();
    json["machine"] = machine;  // where it finished and was evaluated
    json["trained_on"] = pr.machines;
    json["finished"] = now_iso();
    write_file_atomic(results, json_document(json));
    // The last checkpoint's optimiser state is only needed to resume, or to continue a run stopped by its cap or
    // its plateau under a later stop (run/continuation.hpp): drop it otherwise, keep the weights.
    if (outcome.stop_reason != "max_steps" && outcome.stop_reason != "plateau")
        fs::remove_all(pc.run_dir / "checkpoints" / "last" / "optim");
    log("finished");
    return 0;
}

}  // namespace relpos
