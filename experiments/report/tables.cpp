// The report's numbers: per-row means over seeds, paired differences, bootstrap and length buckets on
// the text splits of a task that has them, competence and multiplicity, as ReportTables.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "experiments/config/config.hpp"
#include "experiments/data/corpus.hpp"
#include "experiments/data/json.hpp"
#include "experiments/report/report.hpp"
#include "experiments/report/runs.hpp"
#include "experiments/train/checkpoint.hpp"
#include "experiments/eval/scoring.hpp"
#include "experiments/eval/significance.hpp"
#include "experiments/run/sweep.hpp"
#include "experiments/tasks/metric_names.hpp"
#include "experiments/tasks/task.hpp"

namespace relpos {

namespace fs = std::filesystem;

namespace {

// "test2016.bleu_tok" -> {"test2016", "bleu_tok"}; {"", ""} when not a BLEU metric.
std::pair<std::string, std::string> bleu_metric(const std::string& m) {
    const auto dot = m.rfind('.');
    if (dot == std::string::npos) return {"", ""};
    const std::string what = m.substr(dot + 1);
    if (what != "bleu_tok" && what != "bleu") return {"", ""};
    return {m.substr(0, dot), what};
}

}  // namespace

Stats stats_of(const std::vector<double>& v) {
    Stats s;
    s.n = v.size();
    if (v.empty()) return s;
    for (double x : v) s.mean += x;
    s.mean /= double(v.size());
    if (v.size() > 1) {
        double q = 0;
        for (double x : v) q += (x - s.mean) * (x - s.mean);
        s.std = std::sqrt(q / double(v.size() - 1));  // sample standard deviation
    }
    return s;
}

namespace {

// How a run's best checkpoint was chosen: by the validation loss, or, with a competence target
// (train.stop.target_metric; results.json "competence": {metric, ...}), by that metric (the trainer keeps
// the checkpoint with its highest value, ties to the lower loss).
std::string best_checkpoint_criterion(const RunResult& r) {
    if (r.competent < 0) return "lowest validation loss";
    const std::string metric = r.competence.substr(0, r.competence.find(" >= "));
    return fmt::format("highest {} (ties: lower validation loss)", metric);
}

void add_training_summary(ReportTables& t, const std::vector<RunResult>& runs) {
    for (const auto& row : t.rows) {
        std::vector<double> updates, epochs, best, hours;
        ReportTables::Training tr;
        for (const auto& r : runs) {
            if (label_of(r, t.rows_key) != row) continue;
            updates.push_back(double(r.steps));
            epochs.push_back(double(r.epochs));
            best.push_back(double(r.best_step));
            hours.push_back(r.train_seconds / 3600.0);
            ++tr.stop_reasons[r.stop_reason.empty() ? "(not recorded)" : r.stop_reason];
            ++tr.best_by[best_checkpoint_criterion(r)];
        }
        tr.updates = stats_of(updates);
        tr.epochs = stats_of(epochs);
        tr.best_step = stats_of(best);
        tr.hours = stats_of(hours);
        t.training[row] = tr;
    }
}

// Per-sentence BLEU statistics of a run's hypotheses on a split of a task that reads text files
// (TaskEntry::split_file), scored by the runner's policy (eval/scoring.hpp).
struct SplitScorer {
    const ExperimentConfig& cfg;
    const TaskEntry& task;
    std::map<std::string, std::vector<std::string>> refs;  // (split|kind) -> lines
    std::vector<BleuStats> stats(const RunResult& r, const std::string& split, const std::string& kind) {
        const fs::path hyp = r.dir / fmt::format("hyp.{}.txt", split);
        if (!fs::exists(hyp)) return {};
        const bool tok = kind == "bleu_tok";
        auto& ref = refs[split + "|" + kind];
        // bleu_tok scores against the references as the model was trained (tokenized lowercased, when
        // data.tokenized), bleu against the raw references, as the runner does.
        if (ref.empty()) ref = read_lines(task.split_file(cfg, split, cfg.data.tgt, tok && cfg.data.tokenized));
        const std::vector<std::string> h = read_lines(hyp.string());
        if (h.size() != ref.size()) return {};
        return sentence_bleu(kind, h, ref, reads_tokenized_text(cfg));
    }
    BleuOptions options(const std::string& kind) const { return bleu_options(kind, reads_tokenized_text(cfg)); }
};

void add_sentence_statistics(ReportTables& t, const ExperimentConfig& cfg, const TaskEntry& task,
                             const std::vector<RunResult>& runs) {
    SplitScorer scorer{cfg, task, {}};
    std::map<std::tuple<std::string, std::string, std::string>, std::vector<BleuStats>> cache;  // (run, split, kind)
    auto stats_of_run = [&](const RunResult& r, const std::string& split, const std::string& kind) -> const std::vector<BleuStats>& {
        auto key = std::make_tuple(r.id, split, kind);
        auto it = cache.find(key);
        if (it == cache.end()) it = cache.emplace(key, scorer.stats(r, split, kind)).first;
        return it->second;
    };
    // Paired bootstrap of row a against row b on the seeds both have; nothing when no seed pairs.
    auto bootstrap_pair = [&](const std::string& a_row, const std::string& b_row, const std::string& split,
                              const std::string& kind) -> std::optional<ReportTables::Bootstrap> {
        std::map<std::string, const RunResult*> base, mine;
        for (const auto& r : runs) {
            const std::string label = label_of(r, t.rows_key), seed = label_of(r, "seed");
            if (label == b_row) base[seed] = &r;
            if (label == a_row) mine[seed] = &r;
        }
        std::vector<std::vector<BleuStats>> a, b;
        for (const auto& [seed, r] : mine)
            if (auto it = base.find(seed); it != base.end()) {
                const auto& sa = stats_of_run(*it->second, split, kind);
                const auto& sb = stats_of_run(*r, split, kind);
                if (sa.empty() || sb.empty()) continue;
                a.push_back(sa);
                b.push_back(sb);
            }
        if (a.empty()) return std::nullopt;
        const BootstrapResult br =
            paired_bootstrap(a, b, static_cast<std::size_t>(cfg.report.bootstrap), 12345, scorer.options(kind));
        return ReportTables::Bootstrap{br.observed, br.ci_low, br.ci_high, br.p_value, br.resamples, a.size()};
    };
    if (cfg.report.bootstrap > 0)
        for (const auto& m : t.metrics) {
            const auto [split, kind] = bleu_metric(m);
            if (split.empty()) continue;
            if (!t.baseline.empty())
                for (const auto& row : t.rows)
                    if (row != t.baseline)
                        if (auto b = bootstrap_pair(row, t.baseline, split, kind)) t.bootstrap[{row, m}] = *b;
            for (const auto& [ra, rb] : t.contrasts)
                if (auto b = bootstrap_pair(ra, rb, split, kind)) t.contrast_bootstrap[{ra, rb, m}] = *b;
        }
    // BLEU by source length (whitespace tokens of the source side as the model read it).
    if (cfg.report.length_buckets.empty()) return;
    const auto& edges = cfg.report.length_buckets;
    for (std::size_t b = 0; b <= edges.size(); ++b) {
        const long lo = b == 0 ? 1 : edges[b - 1] + 1;
        t.bucket_labels.push_back(b == edges.size() ? fmt::format("{}+", lo) : fmt::format("{}-{}", lo, edges[b]));
    }
    for (const auto& m : t.metrics) {
        const auto [split, kind] = bleu_metric(m);
        if (split.empty() || kind != "bleu_tok" || split == cfg.data.valid_split) continue;
        if (std::find(t.bucket_splits.begin(), t.bucket_splits.end(), split) != t.bucket_splits.end()) continue;
        const auto src = read_lines(task.split_file(cfg, split, cfg.data.src, cfg.data.tokenized));
        std::vector<std::size_t> bucket(src.size());
        for (std::size_t i = 0; i < src.size(); ++i) {
            const long len = long(split_whitespace(src[i]).size());
            std::size_t b = 0;
            while (b < edges.size() && len > edges[b]) ++b;
            bucket[i] = b;
            ++t.bucket_sentences[{split, t.bucket_labels[b]}];
        }
        t.bucket_splits.push_back(split);
        for (const auto& row : t.rows)
            for (std::size_t b = 0; b < t.bucket_labels.size(); ++b) {
                std::vector<double> v;
                for (const auto& r : runs) {
                    if (label_of(r, t.rows_key) != row) continue;
                    const auto& st = stats_of_run(r, split, kind);
                    if (st.size() != src.size()) continue;
                    BleuStats sum;
                    for (std::size_t i = 0; i < st.size(); ++i)
                        if (bucket[i] == b) sum += st[i];
                    v.push_back(bleu_from_stats(sum, scorer.options(kind)).score);
                }
                t.buckets[{row, split, t.bucket_labels[b]}] = stats_of(v);
            }
    }
}

}  // namespace

// The competence gate's view of the runs: per cell how many reached their target, each metric over the
// competent runs only, and the best run of each cell (the max over seeds, as Ruoss et al. report).
static void add_competence(ReportTables& t, const std::vector<RunResult>& runs) {
    std::set<std::string> asked;
    for (const auto& r : runs)
        if (r.competent >= 0) asked.insert(r.competence);
    if (asked.empty()) return;
    for (const auto& a : asked) t.competence_what += (t.competence_what.empty() ? "" : "; ") + a;
    for (const auto& row : t.rows)
        for (const auto& col : t.cols) {
            std::size_t reached = 0, all = 0;
            for (const auto& r : runs)
                if (label_of(r, t.rows_key) == row && label_of(r, t.cols_key) == col && r.competent >= 0) {
                    ++all;
                    reached += r.competent == 1;
                }
            t.competent[{row, col}] = {reached, all};
            for (const auto& m : t.metrics) {
                std::vector<double> v;
                double best = -std::numeric_limits<double>::infinity();
                for (const auto& r : runs) {
                    if (label_of(r, t.rows_key) != row || label_of(r, t.cols_key) != col) continue;
                    auto it = r.metrics.find(m);
                    if (it == r.metrics.end()) continue;
                    best = std::max(best, it->second);
                    if (r.competent == 1) v.push_back(it->second);
                }
                t.competent_cells[{row, col, m}] = stats_of(v);
                if (std::isfinite(best)) t.max_cells[{row, col, m}] = best;
            }
        }
}

bool is_validation_metric(const std::string& metric, const std::string& valid_split) {
    const std::string split = metric.substr(0, metric.find('.'));
    if (metric.rfind("valid_", 0) == 0) return true;  // the validation line's own figures (valid_bleu_tok)
    if (metric.find('.') == std::string::npos) return false;
    return (!valid_split.empty() && split == valid_split) || split == "val" || split == "valid" || split == "validation";
}

const ReportTables::Comparison* find_comparison(const ReportTables& t, const std::string& a, const std::string& b,
                                                const std::string& metric, bool bootstrap) {
    const std::vector<ReportTables::Comparison>* fams[] = {bootstrap ? &t.family_bootstrap : &t.family_t,
                                                           bootstrap ? &t.no_verdict_bootstrap : &t.no_verdict_t};
    for (const auto* fam : fams)
        for (const auto& c : *fam)
            if (c.a == a && c.b == b && c.metric == metric) return &c;
    return nullptr;
}

// The report's families of comparisons with Holm-adjusted p-values, and the comparisons that carry no
// verdict (ReportTables::Comparison).
static void add_multiplicity(ReportTables& t) {
    using C = ReportTables::Comparison;
    const double nan = std::numeric_limits<double>::quiet_NaN();
    std::set<std::tuple<std::string, std::string, std::string>> seen;  // a contrast that repeats a baseline
                                                                        // comparison is one test, counted once
    // Why a comparison of n paired seeds on metric m carries no verdict ("" when it is a member).
    auto outside = [&](const std::string& m, std::size_t n) -> std::string {
        if (is_validation_metric(m, t.valid_split)) return kNoVerdictValidation;
        if (n < kMinVerdictSeeds) return kNoVerdictTooFewSeeds;
        return "";
    };
    auto add = [&](const std::string& a, const std::string& b, const std::string& m, const Stats& d,
                   const ReportTables::Bootstrap* boot) {
        if (!seen.insert({a, b, m}).second) return;
        if (d.n > 0) {
            C c{a, b, m, d.n, d.mean, nan, nan, nan, nan, outside(m, d.n)};
            if (d.n >= 2) {  // mean ± t_{0.975, n-1} · sd/√n
                const double half = t_critical_95(d.n - 1) * d.std / std::sqrt(double(d.n));
                c.ci_low = d.mean - half;
                c.ci_high = d.mean + half;
            }
            if (c.no_verdict.empty() && !(d.std > 0)) c.no_verdict = kNoVerdictNoSpread;  // t undefined
            if (c.no_verdict.empty()) {
                c.p = t_two_sided_p(d.mean / (d.std / std::sqrt(double(d.n))), d.n - 1);
                t.family_t.push_back(c);
            } else {
                t.no_verdict_t.push_back(c);
            }
        }
        if (boot && boot->seeds > 0) {
            C c{a, b, m, boot->seeds, boot->observed, nan, nan, boot->ci_low, boot->ci_high, outside(m, boot->seeds)};
            if (c.no_verdict.empty()) {
                c.p = boot->p_value;
                t.family_bootstrap.push_back(c);
            } else {
                t.no_verdict_bootstrap.push_back(c);
            }
        }
    };
    auto find = [](const auto& map, const auto& key) -> const ReportTables::Bootstrap* {
        auto it = map.find(key);
        return it == map.end() ? nullptr : &it->second;
    };
    if (!t.baseline.empty())
        for (const auto& r : t.rows)
            for (const auto& m : t.metrics)
                if (r != t.baseline)
                    if (auto p = t.paired.find({r, m}); p != t.paired.end())
                        add(r, t.baseline, m, p->second, find(t.bootstrap, std::make_pair(r, m)));
    for (const auto& [a, b] : t.contrasts)
        for (const auto& m : t.metrics)
            if (auto p = t.contrast_paired.find({a, b, m}); p != t.contrast_paired.end())
                add(a, b, m, p->second, find(t.contrast_bootstrap, std::make_tuple(a, b, m)));
    // The comparisons the config states on test splits, whether or not their runs have finished.
    std::set<std::tuple<std::string, std::string, std::string>> stated;
    for (const auto& m : t.metrics) {
        if (is_validation_metric(m, t.valid_split)) continue;
        if (!t.baseline.empty())
            for (const auto& r : t.rows)
                if (r != t.baseline) stated.insert({r, t.baseline, m});
        for (const auto& [a, b] : t.contrasts) stated.insert({a, b, m});
    }
    t.stated_tests = stated.size();
    const bool training = t.sweep_finished < t.sweep_points;
    for (auto* fam : {&t.family_t, &t.family_bootstrap}) {
        std::vector<double> p;
        for (const auto& c : *fam) p.push_back(c.p);
        const auto adj = holm_adjust(p);
        for (std::size_t i = 0; i < fam->size(); ++i) (*fam)[i].p_holm = adj[i];
        if (training && fam->size() < t.stated_tests)
            for (auto& c : *fam) c.p_bound = std::min(1.0, double(t.stated_tests) * c.p);
    }
}

ReportTables build_report(const std::string& dir_in) {
    const fs::path dir(dir_in);
    if (!fs::exists(dir / "experiment.yaml"))
        throw ConfigError(fmt::format("{}: not an experiment results directory (no experiment.yaml; run `relpos run` first)", dir_in));
    LoadFlags flags;
    flags.check_paths = false;
    ExperimentConfig cfg = load_config((dir / "experiment.yaml").string(), {}, flags);
    ReportTables t;
    t.title = cfg.report.title.empty() ? cfg.name : cfg.report.title;
    t.valid_split = cfg.data.valid_split;
    t.description = cfg.description;
    auto runs = read_runs(dir);
    // A run shared through run_store carries the id and labels of the experiment that trained it (Table 1's
    // "seed=1_position=type-shaw-k-16" seen from Table 2, whose rows are model.position.k). This
    // experiment's own sweep names its rows: the link in runs/ has the name of this experiment's point,
    // and that point's id and labels win.
    try {
        std::map<std::string, std::map<std::string, std::string>> own;
        const std::string yaml = (dir / "experiment.yaml").string();
        const auto points = expand_sweep(cfg, yaml, {}, flags);
        for (const auto& p : points) own[p.id] = p.labels;
        std::set<std::string> study;  // sweep.only: the points that make up the study, which the counts below count
        for (const auto& p : select_study(points, cfg, yaml)) study.insert(p.id);
        std::set<std::string> finished;
        for (auto& r : runs) {
            auto it = own.find(r.entry);
            if (it == own.end()) it = own.find(r.id);
            if (it != own.end()) {
                r.id = it->first;
                r.labels = it->second;
                if (study.count(it->first)) finished.insert(it->first);
            }
        }
        t.sweep_points = study.size();
        t.sweep_finished = finished.size();
    } catch (const std::exception&) {
        // an experiment.yaml from an older relpos whose sweep no longer expands: keep the recorded labels
    }
    for (const auto& r : runs) t.run_labels[r.id] = r.labels;
    t.runs = runs.size();
    t.rows_key = cfg.report.rows;
    t.cols_key = cfg.report.columns;
    t.rows = axis_order(cfg, cfg.report.rows, runs);
    t.cols = axis_order(cfg, cfg.report.columns, runs);
    t.metrics = cfg.report.metrics;
    t.plots = cfg.report.plots;
    {
        const auto sweeps_context = [](const std::vector<SweepAxis>& axes) {
            return std::any_of(axes.begin(), axes.end(), [](const SweepAxis& a) { return a.key == "data.lm.context"; });
        };
        if (!sweeps_context(cfg.sweep.grid) && !sweeps_context(cfg.sweep.cells)) t.train_context = cfg.data.lm.context;
    }
    if (t.metrics.empty())
        for (auto& s : cfg.eval.splits)
            for (auto& m : cfg.eval.metrics_for(s)) t.metrics.push_back(s + "." + m);
    if (cfg.report.reference) {
        t.reference_title = cfg.report.reference->title;
        t.reference = cfg.report.reference->values;
    }
    std::set<std::string> commits, machines;
    // The runs by the machines that trained them, in the order they did (trained_on, or machine where a run
    // records no list), when that differs between runs: OpenBLAS kernels round differently, so a run trained
    // on two of them, or a row on other kernels than the rest, is named, not only the set of machines.
    std::map<std::string, std::vector<std::string>> by_machines;
    double seconds = 0;
    for (const auto& r : runs) {
        if (!r.commit.empty()) commits.insert(r.commit);
        if (!r.machine.empty()) machines.insert(r.machine);
        std::string key;
        for (const auto& m : r.trained_on) {  // results.json says "not recorded", the set of machines need not
            const bool recorded = !is_machines_not_recorded(m);
            if (recorded) machines.insert(m);
            key += (key.empty() ? "" : ", then ") + (recorded ? m : std::string("not recorded"));
        }
        if (key.empty()) key = r.machine.empty() ? "not recorded" : r.machine;
        by_machines[key].push_back(r.id);
        seconds += r.train_seconds;
        if (r.train_cpu_seconds >= 0) {
            t.train_cpu_seconds += r.train_cpu_seconds;
            ++t.runs_with_cpu;
        }
        t.latest = std::max(t.latest, r.finished);
    }
    for (auto& c : commits) t.commits += (t.commits.empty() ? "" : ", ") + c;
    for (auto& m : machines) t.machines += (t.machines.empty() ? "" : "; ") + m;
    if (by_machines.size() > 1)
        for (auto& [key, ids] : by_machines) {
            std::sort(ids.begin(), ids.end());
            t.runs_by_machines.emplace_back(key, ids);
        }
    t.train_seconds = seconds;
    for (const auto& row : t.rows)
        for (const auto& col : t.cols)
            for (const auto& m : t.metrics) {
                std::vector<double> v;
                for (const auto& r : runs)
                    if (label_of(r, t.rows_key) == row && label_of(r, t.cols_key) == col) {
                        auto it = r.metrics.find(m);
                        if (it != r.metrics.end()) v.push_back(it->second);
                    }
                t.cells[{row, col, m}] = stats_of(v);
            }
    add_competence(t, runs);
    if (t.cols_key.empty()) {
        std::set<std::string> seeds;
        for (const auto& r : runs) {
            const std::string seed = label_of(r, "seed");
            if (seed.empty()) continue;
            seeds.insert(seed);
            for (const auto& m : t.metrics)
                if (auto it = r.metrics.find(m); it != r.metrics.end()) t.per_seed[{label_of(r, t.rows_key), seed, m}] = it->second;
        }
        t.seeds.assign(seeds.begin(), seeds.end());
        std::sort(t.seeds.begin(), t.seeds.end(), [](const std::string& a, const std::string& b) {
            return a.size() != b.size() ? a.size() < b.size() : a < b;  // numeric order of whole numbers
        });
    }
    {  // every <split>.<metric>@<n>, grouped by (row, column) in one pass over the runs
        std::map<std::tuple<std::string, std::string, std::string>, std::vector<double>> at_n;
        for (const auto& r : runs)
            for (const auto& [m, v] : r.metrics)
                if (metric_names::at_length(m)) at_n[{label_of(r, t.rows_key), label_of(r, t.cols_key), m}].push_back(v);
        for (const auto& [key, v] : at_n) t.length_cells[key] = stats_of(v);
    }
    // Row a minus row b for the same seed, over the seeds both have.
    auto paired_by_seed = [&](const std::string& a, const std::string& b, const std::string& m) {
        std::map<std::string, double> base, mine;  // seed -> metric
        std::map<std::pair<std::string, std::string>, std::string> seen;  // (row, seed) -> run id
        for (const auto& r : runs) {
            auto it = r.metrics.find(m);
            if (it == r.metrics.end()) continue;
            const std::string label = label_of(r, t.rows_key), seed = label_of(r, "seed");
            if (label != a && label != b) continue;
            // A run that did not reach its competence target says nothing about what the comparison asks (a
            // model that has not learned its task in distribution): its seed drops out of every pairing.
            if (r.competent == 0) continue;
            // Two runs of one row and seed (e.g. the row's encoding at two learning rates) would make the
            // pairing depend on the order the runs are read in: refused, never resolved silently.
            if (auto [at, fresh] = seen.emplace(std::make_pair(label, seed), r.id); !fresh)
                throw ConfigError(fmt::format(
                    "{}: report: row '{}' has two runs of seed {} ({} and {}), so its paired comparisons are ambiguous; "
                    "a row's runs must differ by seed (remove the run that is not this experiment's from runs/, or "
                    "make what tells them apart a report axis)", (dir / "experiment.yaml").string(), label, seed,
                    at->second, r.id));
            if (label == b) base[seed] = it->second;
            if (label == a) mine[seed] = it->second;
        }
        std::vector<double> d;
        for (const auto& [seed, v] : mine)
            if (auto bv = base.find(seed); bv != base.end()) d.push_back(v - bv->second);
        return stats_of(d);
    };
    t.baseline = cfg.report.baseline;
    if (!t.baseline.empty())
        for (const auto& row : t.rows)
            for (const auto& m : t.metrics) t.paired[{row, m}] = paired_by_seed(row, t.baseline, m);
    t.contrasts = cfg.report.contrasts;
    for (const auto& [a, b] : t.contrasts)
        for (const auto& m : t.metrics) t.contrast_paired[{a, b, m}] = paired_by_seed(a, b, m);
    if (t.cols_key.empty()) {
        t.position_pairs = t.contrasts;
        if (t.position_pairs.empty() && !t.baseline.empty())
            for (const auto& row : t.rows)
                if (row != t.baseline) t.position_pairs.emplace_back(row, t.baseline);
        std::map<std::string, metric_names::AtLength> by_position;  // test.loss_pos1024@0 -> its parts
        for (const auto& [key, st] : t.length_cells) {
            const auto a = metric_names::at_length(std::get<2>(key));
            if (a && !a->split.empty() && metric_names::loss_by_position_window(a->metric) > 0) by_position[std::get<2>(key)] = *a;
        }
        for (const auto& [a, b] : t.position_pairs)
            for (const auto& [m, parts] : by_position)
                if (Stats d = paired_by_seed(a, b, m); d.n > 0) t.position_paired[{a, b, parts.family}][parts.n] = d;
    }
    add_training_summary(t, runs);
    if (!cfg.report.compare_dir.empty()) {
        // Resolved from the working directory, like results_dir; a missing one is the user's to fix.
        if (!fs::exists(fs::path(cfg.report.compare_dir) / "experiment.yaml"))
            throw ConfigError(fmt::format("{}: report.compare.dir: {} is not an experiment results directory (no "
                                          "experiment.yaml; paths start at the working directory)",
                                          (dir / "experiment.yaml").string(), cfg.report.compare_dir));
        const ReportTables other = build_report(cfg.report.compare_dir);
        t.compare_title = cfg.report.compare_title;
        t.compare_dir = cfg.report.compare_dir;
        for (const auto& row : t.rows) {
            for (const auto& m : t.metrics) {
                auto c = other.cells.find({row, other.cols.front(), m});
                if (c != other.cells.end()) t.compare_cells[{row, m}] = c->second;
                auto d = other.paired.find({row, m});
                if (d != other.paired.end()) t.compare_paired[{row, m}] = d->second;
            }
            for (const auto& [key, st] : other.length_cells)
                if (std::get<0>(key) == row && std::get<1>(key) == other.cols.front())
                    t.compare_length_cells[{row, std::get<2>(key)}] = st;
        }
    }
    // Per-sentence statistics (bootstrap, length buckets) where the task's splits are text files.
    if (const TaskEntry* task = task_entry(cfg); task && task->split_file) add_sentence_statistics(t, cfg, *task, runs);
    add_multiplicity(t);
    return t;
}

}  // namespace relpos
