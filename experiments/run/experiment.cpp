#include "experiments/run/experiment.hpp"

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "autodiff/blas.hpp"
#include "experiments/data/corpus.hpp"
#include "experiments/data/json.hpp"
#include "experiments/run/continuation.hpp"
#include "experiments/run/identity.hpp"
#include "experiments/run/progress.hpp"
#include "experiments/run/provenance.hpp"
#include "experiments/run/run_one.hpp"
#include "experiments/run/store.hpp"
#include "experiments/tasks/sequence_limits.hpp"
#include "experiments/tasks/task.hpp"
#include "experiments/train/distributed.hpp"
#include "experiments/train/model.hpp"
#include "experiments/train/trainer.hpp"
#include "experiments/util/files.hpp"
#include "experiments/util/text.hpp"

namespace relpos {

namespace fs = std::filesystem;

namespace {

// `relpos run RUN_DIR/config.yaml`: a run's config.yaml is the point's resolved config and keeps its
// experiment's sweep (experiments/run/run_one.hpp), so read as an experiment it is the whole sweep again. The
// point whose run directory holds the file (runs/<id> of the experiment, or its directory in the run store) is
// the run meant; nullopt when the file lies in no point's run directory.
std::optional<std::size_t> point_of_own_directory(const std::vector<SweepPoint>& points, const ExperimentConfig& top,
                                                  const std::string& config_path) {
    std::error_code ec;
    const fs::path dir = fs::absolute(config_path, ec).parent_path();
    if (ec || !fs::exists(dir / "config.yaml", ec)) return std::nullopt;
    const fs::path exp_dir = fs::path(top.results_dir) / top.name;
    for (std::size_t i = 0; i < points.size(); ++i) {
        std::vector<fs::path> candidates{exp_dir / "runs" / points[i].id};
        if (!top.run_store.empty()) candidates.push_back(fs::path(top.run_store) / run_identity(points[i].config));
        for (const auto& c : candidates) {
            std::error_code e;
            if (fs::exists(c, e) && fs::equivalent(c, dir, e)) return i;
        }
    }
    return std::nullopt;
}

// A rank other than 0 of a data-parallel job: trains the points rank 0 orders, writes nothing.
int follow_orders(const std::string& config_path, const std::vector<std::string>& overrides, const RunOptions& opt) {
    Communicator& comm = world();
    install_stop_handlers();
    std::vector<SweepPoint> points;
    bool loaded = false;
    for (;;) {
        std::vector<std::uint64_t> order;
        broadcast_vector(comm, order);
        if (order.at(0) == kAllDone) return static_cast<int>(order.at(1));
        if (!loaded) {  // only once rank 0 has found the config good, so that a bad one is reported once
            const ExperimentConfig top = load_config(config_path, overrides);
            points = select_study(expand_sweep(top, config_path, overrides), top, config_path);
            if (!opt.only.empty()) points = select_matching(points, opt.only, config_path);
            else if (auto own = point_of_own_directory(points, top, config_path)) points = {points[*own]};
            if (opt.shard) points = select_shard(points, *opt.shard);
            loaded = true;
        }
        const SweepPoint& p = points.at(order[0]);
        blas::set_num_threads(std::max<int>(1, static_cast<int>(p.config.threads)));
        const std::vector<Example> train = broadcast_examples(comm, {});
        const std::vector<Example> no_validation;  // rank 0 validates
        auto model = build_model(p.config, order[1], order[2], order[3]);
        Trainer trainer(*model, train, no_validation, p.config.train, static_cast<std::uint64_t>(p.config.seed), "",
                        config_hash(p.config));
        trainer.distribute(comm);
        try {
            trainer.run();
        } catch (const NonFiniteError&) {
            // every rank sees the same summed loss and gradient; rank 0 reports the stop
        }
    }
}

}  // namespace

int run_experiment(const std::string& config_path, const std::vector<std::string>& overrides, const RunOptions& opt) {
    Communicator& comm = world();
    if (comm.size() == 1) return lead_experiment(config_path, overrides, opt);
    if (!comm.is_root()) return follow_orders(config_path, overrides, opt);
    if (opt.jobs > 1)
        throw ConfigError(fmt::format("--jobs {}: under MPI the {} ranks train one run at a time together; leave --jobs "
                                      "out, or split a sweep between MPI jobs with --shard (docs/distributed.md)",
                                      opt.jobs, comm.size()));
    const int code = lead_experiment(config_path, overrides, opt);
    order_all_done(comm, code);
    return code;
}

int lead_experiment(const std::string& config_path, const std::vector<std::string>& overrides, const RunOptions& opt) {
    ExperimentConfig top = load_config(config_path, overrides);
    auto points = expand_sweep(top, config_path, overrides);
    const std::size_t grid_points = points.size();
    points = select_study(points, top, config_path);
    const std::size_t total_points = points.size();
    if (!opt.only.empty()) points = select_matching(points, opt.only, config_path);
    const auto own = opt.only.empty() ? point_of_own_directory(points, top, config_path) : std::nullopt;
    if (own) {
        fmt::print(stderr,
                   "note: {} is the config of the run {} (the file is in its directory) and keeps its experiment's "
                   "sweep of {} points: this run only (--only GLOB selects points of the sweep; the experiment's own "
                   "config trains them all)\n",
                   config_path, points[*own].id, points.size());
        points = {points[*own]};
    }
    const std::size_t selected_points = points.size();
    if (opt.shard) points = select_shard(points, *opt.shard);
    const fs::path exp_dir = fs::path(top.results_dir) / top.name;
    // With a run store a run is named by its config hash and shared by every experiment that asks for
    // it; runs/<id> under the experiment is a symbolic link to it.
    // A point the store holds under another stop (experiments/run/continuation.hpp, find_equivalent: a run that
    // stopped at its target or plateau before either cap, and that either plateau rule lets stop there) is that run; found once, before anything is written.
    // The store is read once, and only when a point has no run of its own.
    std::map<std::string, fs::path> equivalent;  // by point id
    if (!top.run_store.empty()) {
        std::optional<EquivalentIndex> index;
        for (const auto& p : points) {
            const fs::path own = fs::path(top.run_store) / run_identity(p.config);
            std::error_code ec;
            if (fs::exists(own / "results.json", ec) || fs::exists(own / "metrics.jsonl", ec)) continue;
            if (!index) index.emplace(top.run_store);
            if (auto eq = index->find(p.config, own)) equivalent[p.id] = *eq;
        }
    } else {
        // runs/<id> without a store: the run there may have finished under another stop of this config (it
        // stopped before either), and is then this point's run; the one place that asks (run_point and
        // check_existing_run are told)
        for (const auto& p : points) {
            const fs::path own = exp_dir / "runs" / p.id;
            std::error_code ec;
            // is_equivalent is false for the run itself (the same stop)
            if (fs::exists(own / "results.json", ec) && is_equivalent(own, p.config)) equivalent[p.id] = own;
        }
    }
    auto is_equivalent_point = [&](const SweepPoint& p) { return equivalent.count(p.id) > 0; };
    auto run_dir_of = [&](const SweepPoint& p) {
        if (auto it = equivalent.find(p.id); it != equivalent.end()) return it->second;
        if (top.run_store.empty()) return exp_dir / "runs" / p.id;
        return fs::path(top.run_store) / run_identity(p.config);
    };
    Progress progress(opt.quiet);
    // Every point's model is validated before anything is listed or run (an invalid plug-in option such
    // as k: -1 fails here, with its file and line, not when the run starts).
    // So is what its data and evaluation need in memory (check_memory_up_front), before any is generated; its
    // task against its model family and metrics (make_task builds nothing); and a run it already has against its
    // config (a finished run of another config is refused by --list as by a run).
    for (auto& p : points) {
        build_model(p.config, 16);
        check_memory_up_front(p.config, overrides);
        make_task(p.config);
        check_existing_run_config(p, run_dir_of(p), is_equivalent_point(p));
    }
    // Default layout: two 1-thread runs side by side train 1.19x (sinusoidal) to 1.26x (Shaw) more tokens
    // per second than one 2-thread run on 2 cores (docs/performance.md), so by default every thread of
    // `threads` gets a run of its own while there are points enough.
    // Under MPI every rank takes part in every run: one run at a time (run_experiment refuses --jobs > 1).
    const std::size_t ranks = static_cast<std::size_t>(world().size());
    const std::size_t wanted = ranks > 1 ? 1 : opt.jobs ? opt.jobs : static_cast<std::size_t>(std::max<long>(1, top.threads));
    const std::size_t jobs = std::max<std::size_t>(1, std::min(wanted, points.size()));
    // `threads` is what one run would use alone; --jobs N splits it between N side-by-side runs. Each
    // run sets its own count on its own thread (every calling thread owns its pool), so a sweep point's
    // `threads` is honoured too and the numbers depend only on the threads a run gets.
    auto threads_for = [&](const ExperimentConfig& c) {
        return std::max<int>(1, static_cast<int>(c.threads / static_cast<long>(jobs)));
    };
    if (opt.list_only) {
        std::size_t finished = 0, started = 0;
        double seconds = 0;  // training cost of the finished runs, core-seconds (RunRecord::core_seconds)
        // A cell: a point's overrides but its seed. Cost per cell, for the estimate below.
        auto cell_of = [](const SweepPoint& p) {
            std::string key;
            for (const auto& o : p.overrides)
                if (o.rfind("seed=", 0) != 0) key += o + '\n';
            return key;
        };
        std::map<std::string, std::pair<double, std::size_t>> cell_cost;  // core-seconds, finished runs
        std::vector<std::string> left_cells;                              // the cell of every unfinished point
        for (auto& p : points) {
            const fs::path dir = run_dir_of(p), results = dir / "results.json";
            const bool done = fs::exists(results);
            std::string state = done ? "  [finished]" : unfinished_run_state(dir);
            if (done) {
                const RunRecord r = read_finished_run(results);
                if (is_equivalent_point(p))
                    state = fmt::format("  [finished: the same run under another stop, stopped at its {} at update {}]",
                                        r.stop_reason, r.steps);
                ++finished;
                seconds += r.core_seconds();
                auto& c = cell_cost[cell_of(p)];
                c.first += r.core_seconds();
                ++c.second;
            } else {
                left_cells.push_back(cell_of(p));
                if (!state.empty()) ++started;
            }
            // Not started: whether it will continue a run of the store (experiments/run/continuation.hpp),
            // at the thread count this command would give it.
            if (!done && state.empty() && !top.run_store.empty()) {
                std::vector<std::string> refused;
                if (auto c = find_continuation(p.config, dir, threads_for(p.config), static_cast<int>(ranks), &refused))
                    state = fmt::format("  [continues {}, {}]", c->from.filename().string(), c->said());
                else if (!refused.empty())
                    state = fmt::format("  [from update 0, not continuing {}]", refused.front());
            }
            fmt::print("{:<40} {}{}{}\n", p.id, fmt::join(p.overrides, " "),
                       top.run_store.empty() ? "" : fmt::format("  -> {}", dir.string()), state);
        }
        // What is left, for planning a long campaign (stderr: stdout stays one line per point).
        const std::size_t left = points.size() - finished;
        std::string estimate;
        if (finished && left && seconds > 0) {
            // core-hours: CPU time where runs record it (train_cpu_seconds), else wall time x threads. Each
            // unfinished run at its cell's mean where the cell has finished runs; the others (a cell's cost can
            // differ tenfold from another's) at the mean over all finished runs, and said so.
            double left_seconds = 0;
            std::size_t guessed = 0;
            for (const auto& key : left_cells) {
                const auto it = cell_cost.find(key);
                if (it != cell_cost.end()) {
                    left_seconds += it->second.first / it->second.second;
                } else {
                    left_seconds += seconds / finished;
                    ++guessed;
                }
            }
            estimate = fmt::format("; at the finished runs' mean training time, per cell ({:.2f} core-hours over all "
                                   "of them) about {:.1f} core-hours of training left", seconds / finished / 3600,
                                   left_seconds / 3600);
            if (guessed)
                estimate += fmt::format(", {} of the {} run(s) left in cells with no finished run yet, counted at the "
                                        "mean over all (their cost may differ)", guessed, left);
        }
        std::fflush(stdout);  // after the points, also through a pipe
        // sweep.only: the study is these points, not the whole grid
        const std::string study = top.sweep.only.empty()
                                      ? std::string()
                                      : fmt::format(" (sweep.only: the study's {} of the grid's {} points)",
                                                    total_points, grid_points);
        const std::string complete =
            left == 0 && opt.only.empty() && !opt.shard ? "; the study is complete: `relpos run` trains nothing" : "";
        fmt::print(stderr, "# {} of {} run(s) finished, {} left{}{}{}{}\n", finished, points.size(), left,
                   started ? fmt::format(" ({} started)", started) : "", estimate, study, complete);
        return 0;
    }

    check_results_dir(config_path, exp_dir);
    if (!top.run_store.empty()) check_results_dir(config_path, top.run_store, "run_store");

    // Data-dependent checks (learned-position limits) and the state of existing runs, before anything
    // is written for the runs. Data messages are held back so that an error prints one line.
    std::vector<std::string> data_messages;
    std::map<std::string, std::shared_ptr<Dataset>> datasets;
    std::mutex mu;
    // The data of a point are what its task loads from: the data section, the splits it evaluates and the
    // model family (a task may generate other data for another family).
    auto data_key = [](const ExperimentConfig& c) {
        return section_yaml(c, "data") + "|" + join(c.eval.splits, "|") + "|" + c.model.family;
    };
    std::error_code ec;
    fs::path existing = exp_dir;  // the deepest directory that exists before anything is written
    while (!existing.empty() && !fs::exists(existing, ec)) existing = existing.parent_path();
    try {
        for (auto& p : points) {
            auto& slot = datasets[data_key(p.config)];
            if (!slot)
                slot = std::make_shared<Dataset>(load_dataset(p.config, (exp_dir / "subword").string(),
                                                              [&](const std::string& s) { data_messages.push_back(s); }));
            auto model = build_model(p.config, slot->vocab, slot->longest_source, slot->longest_target);
            check_randomized_ranges(p.config, *slot);
            check_existing_run(p, run_dir_of(p), *model, is_equivalent_point(p));
        }
    } catch (...) {
        // A failed subword training may have created the (empty) cache directory and its parents:
        // leave no trace of a run that never started.
        // A subword model trained by this very call (the experiment is new) goes too: an error after the
        // subword training (no pair left under data.max_len, an empty reference) leaves nothing behind.
        if (existing != exp_dir && fs::path(existing) != exp_dir / "subword") fs::remove_all(exp_dir / "subword", ec);
        for (fs::path p = exp_dir / "subword"; !p.empty() && p != existing; p = p.parent_path())
            if (!fs::remove(p, ec) && ec) break;  // not empty (or not ours): stop
        throw;
    }
    auto dataset_for = [&](const ExperimentConfig& c) { return datasets.at(data_key(c)); };

    // the links to the run store checked before anything is made (a refusal leaves no directory behind)
    const std::vector<SharedLink> links =
        top.run_store.empty() ? std::vector<SharedLink>{} : plan_shared_links(points, exp_dir, run_dir_of, config_path);
    try {
        fs::create_directories(exp_dir / "runs");
        if (!top.run_store.empty()) fs::create_directories(top.run_store);
        const fs::path probe = exp_dir / ".write-test";
        std::ofstream(probe) << "ok";
        if (!fs::exists(probe)) throw std::runtime_error("");
        fs::remove(probe);
    } catch (const std::exception&) {
        throw ConfigError(fmt::format("{}: results_dir: cannot create or write {} (check the path and permissions)",
                                      config_path, exp_dir.string()));
    }
    make_shared_links(links);
    if (!own) {
        // Rewritten only when the experiment's config changed: a no-op `relpos run` of a finished (and
        // committed) experiment leaves its experiment.yaml, commit line included, as it was. A run's own
        // config.yaml (one point's resolved values) is not the experiment's, and leaves it too.
        const std::string body = to_yaml(top);
        const fs::path file = exp_dir / "experiment.yaml";
        std::string old = fs::exists(file) ? read_text_file(file.string()) : std::string();
        const auto pos = old.find("\n# commit ");
        const auto body_at = pos == std::string::npos ? std::string::npos : old.find('\n', pos + 1);
        if (body_at == std::string::npos || old.substr(body_at + 1) != body)
            write_file_atomic(file, fmt::format("# written by relpos run {}\n# commit {}\n", config_path, source_commit()) + body);
    }
    install_stop_handlers();

    const int threads_each = threads_for(top);
    progress.message(fmt::format("{}: {} run(s){}{} with {} job(s) x {} thread(s){}; results in {}", top.name, points.size(),
                                 opt.shard ? fmt::format(" (shard {}/{} of {})", opt.shard->index, opt.shard->count,
                                                         selected_points)
                                           : "",
                                 opt.only.empty() ? "" : fmt::format(" (--only '{}': {} of the sweep's {})", opt.only,
                                                                      selected_points, total_points),
                                 jobs, threads_each, ranks > 1 ? fmt::format(" x {} MPI ranks", ranks) : "",
                                 exp_dir.string()));
    for (auto& m : data_messages) progress.message(m);
    if (std::all_of(points.begin(), points.end(),
                    [&](const SweepPoint& p) { return fs::exists(run_dir_of(p) / "results.json"); }))
        progress.message(fmt::format("{}: every run has finished{}: nothing to train", top.name,
                                     opt.only.empty() && !opt.shard ? " (the study is complete)" : ""));
    if (const std::string note = blas::core_type_notice(); !note.empty()) progress.message(note);

    // --finish-before: the last moment a run may start is that time less the longest run the sweep has
    // seen, at this machine's pace: the most updates a finished run took, times the seconds per update of
    // the most recently finished one (runs of other machines and layouts ran at other speeds), + 10% and
    // 5 minutes for evaluation and slack.
    std::optional<std::int64_t> start_before = opt.start_before;
    if (opt.finish_before) {
        double most_steps = 0, pace = 0, longest = 0;
        std::string latest;
        for (const auto& p : points) {
            const fs::path results = run_dir_of(p) / "results.json";
            if (!fs::exists(results)) continue;
            const RunRecord r = read_finished_run(results);
            if (r.steps <= 0 || r.train_seconds <= 0) continue;
            most_steps = std::max(most_steps, double(r.steps));
            if (pace == 0 || r.finished > latest) {
                latest = r.finished;
                pace = r.train_seconds / double(r.steps);
            }
        }
        longest = most_steps * pace;
        const std::int64_t need = longest > 0 ? static_cast<std::int64_t>(longest * 1.1) + 300 : 0;
        const std::int64_t last_start = *opt.finish_before - need;
        if (!start_before || last_start < *start_before) start_before = last_start;
        const std::time_t t = static_cast<std::time_t>(last_start);
        std::tm tm{};
        localtime_r(&t, &tm);
        progress.message(longest > 0 ? fmt::format("--finish-before: a run takes up to {:.0f} min here ({:.0f} updates, the "
                                                   "most a finished run took, at {:.3f} s each, the pace of the latest; + 10% "
                                                   "+ 5 min), so new runs start until {:%H:%M}",
                                                   need / 60.0, most_steps, pace, tm)
                                     : "--finish-before: no finished run to time yet, so new runs start until that time");
    }
    int worst = 0;
    std::size_t next = 0;
    bool deadline_passed = false;  // --start-before / --finish-before: the points from `next` on were not started
    std::exception_ptr failure;
    auto worker = [&] {
        for (;;) {
            std::size_t i;
            {
                std::lock_guard<std::mutex> lk(mu);
                if (next >= points.size() || failure || g_stop_requested.load()) return;
                if (start_before && static_cast<std::int64_t>(std::time(nullptr)) >= *start_before) {
                    deadline_passed = true;
                    return;
                }
                i = next++;
            }
            try {
                auto d = dataset_for(points[i].config);
                const int threads = threads_for(points[i].config);
                blas::set_num_threads(threads);
                PointContext pc{&points[i], run_dir_of(points[i]), i + 1, points.size(), threads,
                                is_equivalent_point(points[i])};
                const int rc = run_point(pc, *d, progress);
                std::lock_guard<std::mutex> lk(mu);
                worst = std::max(worst, rc);
            } catch (...) {
                std::lock_guard<std::mutex> lk(mu);
                if (!failure) failure = std::current_exception();
            }
        }
    };
    std::vector<std::thread> pool;
    for (std::size_t j = 1; j < jobs; ++j) pool.emplace_back(worker);
    worker();
    for (auto& t : pool) t.join();
    progress.finish();
    if (failure) std::rethrow_exception(failure);
    if (deadline_passed) {
        std::size_t left = 0;
        for (std::size_t k = next; k < points.size(); ++k) left += !fs::exists(run_dir_of(points[k]) / "results.json");
        if (left)
            progress.message(fmt::format("{} run(s) not started: {} had passed (run the same command again "
                                         "to train them; finished runs are skipped)",
                                         left, opt.start_before && start_before == opt.start_before ? "--start-before"
                                                                                                     : "the last start --finish-before allows"));
    }
    if (g_stop_requested.load()) {
        // Ctrl-C stops the sweep, not a run being evaluated: a run that had finished training when it came
        // is evaluated and written. 130 says that something is left to resume; when nothing is (the last
        // run was being decoded), the experiment is complete and the exit code says so.
        const bool all_done = std::all_of(points.begin(), points.end(),
                                          [&](const SweepPoint& p) { return fs::exists(run_dir_of(p) / "results.json"); });
        if (!all_done) return 130;
        progress.message("interrupted, but every run had finished: nothing is left to resume");
    }
    return worst;
}

}  // namespace relpos
