// `relpos report DIR`: tables shaped like the paper's (Markdown, CSV, JSON) from finished runs, mean
// ± sample standard deviation over seeds with the number of seeds, the paper's published figure in a
// side column, and plots through gnuplot when it is installed.
#include <algorithm>
#include <functional>
#include <limits>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "experiments/eval/bleu.hpp"
#include "experiments/train/checkpoint.hpp"
#include "experiments/config/config.hpp"
#include "experiments/data/corpus.hpp"
#include "experiments/data/json.hpp"
#include "experiments/report/report.hpp"
#include "experiments/eval/scoring.hpp"
#include "experiments/tasks/task.hpp"
#include "experiments/util/files.hpp"
#include "experiments/eval/significance.hpp"
#include "experiments/run/sweep.hpp"

namespace relpos {

namespace fs = std::filesystem;

namespace {

struct RunResult {
    std::string id;
    std::map<std::string, std::string> labels;
    std::map<std::string, double> metrics;
    std::string commit, machine, finished;
    double train_seconds = 0;
    long steps = 0, parameters = 0, epochs = 0, best_step = 0;
    std::string stop_reason;  // "" for runs from before the stopping rule
    // The competence gate (results.json "competence", train.stop.target_metric): -1 no record, 0 not
    // reached, 1 reached; what was asked ("val.accuracy >= 99").
    int competent = -1;
    std::string competence;
    fs::path dir;
};

std::vector<RunResult> read_runs(const fs::path& dir) {
    std::vector<RunResult> out;
    const fs::path runs = dir / "runs";
    if (!fs::exists(runs)) return out;
    std::vector<fs::path> paths;
    for (auto& e : fs::directory_iterator(runs))
        if (fs::exists(e.path() / "results.json")) paths.push_back(e.path());
    std::sort(paths.begin(), paths.end());
    for (auto& p : paths) {
        const std::string file = (p / "results.json").string();
        const Json n = parse_json_or_throw<CheckpointError>(read_text_file(file), file);
        // A results.json that is not the object a finished run writes (empty, a scalar, a list, wrong types)
        // is named with what it lacks, not reported as an internal error.
        if (!n.is_object() || !n.contains("id") || !n["id"].is_string() ||
            (n.contains("metrics") && !n["metrics"].is_object()) || (n.contains("labels") && !n["labels"].is_object()))
            throw CheckpointError(fmt::format("{} is not a finished run's results (expected a JSON object with \"id\", "
                                              "\"labels\" and \"metrics\"); remove the run directory or run it again",
                                              file));
        RunResult r;
        auto wrong = [&](const std::string& key, const char* what) {
            return CheckpointError(fmt::format("{}: \"{}\" is not {}; remove the run directory or run it again", file,
                                               key, what));
        };
        r.id = n["id"].get<std::string>();
        const Json labels = n.value("labels", Json::object()), metrics = n.value("metrics", Json::object());
        for (const auto& [k, v] : labels.items()) {
            if (!v.is_string()) throw wrong("labels." + k, "a string");
            r.labels[k] = v.get<std::string>();
        }
        for (const auto& [k, v] : metrics.items()) {
            if (v.is_null()) continue;  // null: not a finite number (a diverged run); left out of the means
            if (!v.is_number()) throw wrong("metrics." + k, "a number or null");
            r.metrics[k] = v.get<double>();
        }
        auto text = [&](const char* key) {
            if (!n.contains(key)) return std::string();
            if (!n[key].is_string()) throw wrong(key, "a string");
            return n[key].get<std::string>();
        };
        auto number = [&](const char* key) {
            if (!n.contains(key) || n[key].is_null()) return 0.0;
            if (!n[key].is_number()) throw wrong(key, "a number");
            return n[key].get<double>();
        };
        r.commit = text("commit");
        r.machine = text("machine");
        r.finished = text("finished");
        r.stop_reason = text("stop_reason");
        r.train_seconds = number("train_seconds");
        auto whole = [&](const char* key) {
            const double v = number(key);
            if (!(v >= 0 && v <= 1e15 && v == std::floor(v))) throw wrong(key, "a whole number");
            return static_cast<long>(v);
        };
        r.steps = whole("steps");
        r.parameters = whole("parameters");
        r.epochs = whole("epochs_completed");
        r.best_step = whole("best_step");
        if (n.contains("competence")) {
            const Json& c = n["competence"];
            if (!c.is_object() || !c.contains("reached") || !c["reached"].is_boolean() || !c.contains("metric") ||
                !c["metric"].is_string() || !c.contains("target") || !c["target"].is_number())
                throw wrong("competence", "an object with \"metric\", \"target\" and \"reached\"");
            r.competent = c["reached"].get<bool>() ? 1 : 0;
            r.competence = fmt::format("{} >= {}", c["metric"].get<std::string>(), c["target"].get<double>());
        }
        r.dir = p;
        out.push_back(std::move(r));
    }
    return out;
}

// A label as a file-name part: letters, digits, '-', '_' and '.' kept, anything else '_'.
std::string safe_name(const std::string& s) {
    std::string r;
    for (char c : s) r += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.') ? c : '_';
    return r;
}

bool is_number(const std::string& s) {
    char* end = nullptr;
    std::strtod(s.c_str(), &end);
    return !s.empty() && *end == '\0';
}

std::string label_of(const RunResult& r, const std::string& key);

// Row (or column) labels in the order the sweep lists them.
std::vector<std::string> axis_order(const ExperimentConfig& cfg, const std::string& key, const std::vector<RunResult>& runs) {
    if (key.empty()) return {""};
    std::vector<std::string> order = report_axis_labels(cfg, key);
    for (const auto& r : runs) {  // labels of runs no longer in the grid go last
        const std::string l = label_of(r, key);
        if (!l.empty() && std::find(order.begin(), order.end(), l) == order.end()) order.push_back(l);
    }
    return order;
}

// A run's label on a report axis: its value of the swept key, or of each key of a "a+b" axis joined by
// " · " ("" when it has none).
std::string label_of(const RunResult& r, const std::string& key) {
    if (key.empty()) return "";
    std::string out;
    const auto parts = report_axis_parts(key);
    for (std::size_t i = 0; i < parts.size(); ++i) {
        auto it = r.labels.find(parts[i]);
        if (it == r.labels.end()) return "";
        out += (i ? kAxisLabelJoin : "") + it->second;
    }
    return out;
}

// "+1.23 ± 0.29 (n=3, t=7.3*)": mean ± sd of the paired differences, the paired t statistic, and * when
// |t| exceeds the 5% two-sided critical value for n - 1 degrees of freedom.
// "k=16" for key model.position.k and label 16: a curve's name in the legend.
std::string named_label(const std::string& key, const std::string& label) {
    return key.substr(key.rfind('.') + 1) + "=" + label;
}

// "+1.23 [+0.50, +1.96] n=5 t=4.7†": the mean paired difference, its 95% confidence interval
// (mean ± t(0.975, n-1) · sd/√n), the paired t statistic, and † when the interval excludes 0.
std::string delta_text(const Stats& s) {
    if (s.n == 0) return "–";
    if (s.n == 1) return fmt::format("{:+.2f} (n=1)", s.mean);
    if (s.std == 0) return fmt::format("{:+.2f} (n={}, no spread)", s.mean, s.n);
    const double se = s.std / std::sqrt(double(s.n)), half = t_critical_95(s.n - 1) * se;
    const double tstat = s.mean / se;
    return fmt::format("{:+.2f} [{:+.2f}, {:+.2f}] n={} t={:.1f}{}", s.mean, s.mean - half, s.mean + half, s.n, tstat,
                       std::abs(tstat) > t_critical_95(s.n - 1) ? "†" : "");
}

std::string bootstrap_text(const ReportTables::Bootstrap& b) {
    if (b.seeds == 0) return "–";
    return fmt::format("p={:.3f}{} (Δ {:+.2f} [{:+.2f}, {:+.2f}])", b.p_value, b.p_value < 0.05 ? "‡" : "", b.observed,
                       b.ci_low, b.ci_high);
}

// "test2016.bleu_tok" -> {"test2016", "bleu_tok"}; {"", ""} when not a BLEU metric.
std::pair<std::string, std::string> bleu_metric(const std::string& m) {
    const auto dot = m.rfind('.');
    if (dot == std::string::npos) return {"", ""};
    const std::string what = m.substr(dot + 1);
    if (what != "bleu_tok" && what != "bleu") return {"", ""};
    return {m.substr(0, dot), what};
}

std::string cell_text(const Stats& s) {
    if (s.n == 0) return "–";
    if (s.n == 1) return fmt::format("{:.2f} (n=1)", s.mean);
    return fmt::format("{:.2f} ± {:.2f} (n={})", s.mean, s.std, s.n);
}

bool have_gnuplot() { return std::system("command -v gnuplot > /dev/null 2>&1") == 0; }

// Text for a single-quoted gnuplot string: a quote is written twice (a title such as "Shaw's table"
// would otherwise end the string and break the script).
std::string gq(const std::string& text) {
    std::string out;
    for (char c : text) {
        out += c;
        if (c == '\'') out += '\'';
    }
    return out;
}

void run_gnuplot(const fs::path& script) {
    const std::string cmd = fmt::format("gnuplot '{}' > /dev/null 2>&1", script.string());
    if (std::system(cmd.c_str()) != 0)
        throw std::runtime_error(fmt::format("gnuplot failed on {}", script.string()));
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

// The report's families of comparisons with Holm-adjusted p-values (ReportTables::Comparison).
static void add_multiplicity(ReportTables& t) {
    using C = ReportTables::Comparison;
    std::set<std::tuple<std::string, std::string, std::string>> seen;  // a contrast that repeats a baseline
                                                                        // comparison is one test, counted once
    auto add = [&](const std::string& a, const std::string& b, const std::string& m, const Stats& d,
                   const ReportTables::Bootstrap* boot) {
        if (!seen.insert({a, b, m}).second) return;
        if (d.n >= 2 && d.std > 0)
            t.family_t.push_back(C{a, b, m, d.n, d.mean, t_two_sided_p(d.mean / (d.std / std::sqrt(double(d.n))), d.n - 1), 1});
        if (boot && boot->seeds > 0) t.family_bootstrap.push_back(C{a, b, m, boot->seeds, boot->observed, boot->p_value, 1});
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
    for (auto* fam : {&t.family_t, &t.family_bootstrap}) {
        std::vector<double> p;
        for (const auto& c : *fam) p.push_back(c.p);
        const auto adj = holm_adjust(p);
        for (std::size_t i = 0; i < fam->size(); ++i) (*fam)[i].p_holm = adj[i];
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
    t.description = cfg.description;
    auto runs = read_runs(dir);
    // A run shared through run_store carries the id and labels of the experiment that trained it (Table 1's
    // "seed=1_position=type-shaw-k-16" seen from Table 2, whose rows are model.position.k). This
    // experiment's own sweep names its rows: the link in runs/ has the name of this experiment's point,
    // and that point's id and labels win.
    try {
        std::map<std::string, std::map<std::string, std::string>> own;
        for (const auto& p : expand_sweep(cfg, (dir / "experiment.yaml").string(), {}, flags)) own[p.id] = p.labels;
        for (auto& r : runs) {
            auto it = own.find(r.dir.filename().string());
            if (it == own.end()) it = own.find(r.id);
            if (it != own.end()) {
                r.id = it->first;
                r.labels = it->second;
            }
        }
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
    if (t.metrics.empty())
        for (auto& s : cfg.eval.splits)
            for (auto& m : cfg.eval.metrics) t.metrics.push_back(s + "." + m);
    if (cfg.report.reference) {
        t.reference_title = cfg.report.reference->title;
        t.reference = cfg.report.reference->values;
    }
    std::set<std::string> commits, machines;
    double seconds = 0;
    for (const auto& r : runs) {
        if (!r.commit.empty()) commits.insert(r.commit);
        if (!r.machine.empty()) machines.insert(r.machine);
        seconds += r.train_seconds;
        t.latest = std::max(t.latest, r.finished);
    }
    for (auto& c : commits) t.commits += (t.commits.empty() ? "" : ", ") + c;
    for (auto& m : machines) t.machines += (t.machines.empty() ? "" : "; ") + m;
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
            for (const auto& [m, v] : r.metrics) {
                const auto at = m.rfind('@');
                if (at != std::string::npos && is_number(m.substr(at + 1)))
                    at_n[{label_of(r, t.rows_key), label_of(r, t.cols_key), m}].push_back(v);
            }
        for (const auto& [key, v] : at_n) t.length_cells[key] = stats_of(v);
    }
    // Row a minus row b for the same seed, over the seeds both have.
    auto paired_by_seed = [&](const std::string& a, const std::string& b, const std::string& m) {
        std::map<std::string, double> base, mine;  // seed -> metric
        for (const auto& r : runs) {
            auto it = r.metrics.find(m);
            if (it == r.metrics.end()) continue;
            const std::string label = label_of(r, t.rows_key), seed = label_of(r, "seed");
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
    add_training_summary(t, runs);
    if (!cfg.report.compare_dir.empty()) {
        // Resolved from the working directory, like results_dir; a missing one is the user's to fix.
        if (!fs::exists(fs::path(cfg.report.compare_dir) / "experiment.yaml"))
            throw ConfigError(fmt::format("{}: report.compare.dir: {} is not an experiment results directory (no "
                                          "experiment.yaml; paths start at the working directory)",
                                          (dir / "experiment.yaml").string(), cfg.report.compare_dir));
        const ReportTables other = build_report(cfg.report.compare_dir);
        t.compare_title = cfg.report.compare_title;
        for (const auto& row : t.rows)
            for (const auto& m : t.metrics) {
                auto c = other.cells.find({row, other.cols.front(), m});
                if (c != other.cells.end()) t.compare_cells[{row, m}] = c->second;
                auto d = other.paired.find({row, m});
                if (d != other.paired.end()) t.compare_paired[{row, m}] = d->second;
            }
    }
    // Per-sentence statistics (bootstrap, length buckets) where the task's splits are text files.
    if (const TaskEntry* task = task_entry(cfg); task && task->split_file) add_sentence_statistics(t, cfg, *task, runs);
    add_multiplicity(t);
    return t;
}

std::string render_markdown(const ReportTables& t) {
    std::string md = fmt::format("## {}\n\n", t.title);
    if (!t.description.empty()) md += t.description + "\n\n";
    const bool has_ref = !t.reference.empty();
    auto row_name = [&](const std::string& r) { return t.rows_key.empty() ? std::string("all runs") : r; };
    const bool has_delta = !t.baseline.empty() && !t.metrics.empty();
    if (t.cols_key.empty()) {
        md += "| " + (t.rows_key.empty() ? std::string("") : t.rows_key) + " |";
        for (auto& m : t.metrics) md += " " + m + " |";
        if (has_delta) md += fmt::format(" Δ {} vs {} (same seed, 95% CI) |", t.metrics.front(), t.baseline);
        const bool has_cmp = !t.compare_title.empty() && !t.metrics.empty();
        if (has_cmp) {
            md += fmt::format(" {} at {} |", t.metrics.front(), t.compare_title);
            if (has_delta) md += fmt::format(" Δ at {} |", t.compare_title);
        }
        if (has_ref) md += " " + t.reference_title + " |";
        md += "\n|---|";
        const std::size_t extra = (has_ref ? 1 : 0) + (has_delta ? 1 : 0) + (has_cmp ? (has_delta ? 2 : 1) : 0);
        for (std::size_t i = 0; i < t.metrics.size() + extra; ++i) md += "---|";
        md += "\n";
        for (auto& r : t.rows) {
            md += "| " + row_name(r) + " |";
            for (auto& m : t.metrics) md += " " + cell_text(t.cells.at({r, "", m})) + " |";
            if (has_delta) md += " " + (r == t.baseline ? std::string("(baseline)") : delta_text(t.paired.at({r, t.metrics.front()}))) + " |";
            if (has_cmp) {
                auto c = t.compare_cells.find({r, t.metrics.front()});
                md += " " + (c == t.compare_cells.end() ? std::string("–") : cell_text(c->second)) + " |";
                if (has_delta) {
                    auto d = t.compare_paired.find({r, t.metrics.front()});
                    md += " " + (r == t.baseline ? std::string("(baseline)")
                                                 : d == t.compare_paired.end() ? std::string("–") : delta_text(d->second)) + " |";
                }
            }
            if (has_ref) {
                auto it = t.reference.find(r);
                md += " " + (it == t.reference.end() ? std::string("–") : fmt::format("{:.1f}", it->second)) + " |";
            }
            md += "\n";
        }
    } else {
        for (auto& m : t.metrics) {
            md += fmt::format("**{}** (rows: {}, columns: {})\n\n| {} |", m, t.rows_key, t.cols_key, t.rows_key);
            for (auto& c : t.cols) md += " " + t.cols_key + "=" + c + " |";
            if (has_ref) md += " " + t.reference_title + " |";
            md += "\n|---|";
            for (std::size_t i = 0; i < t.cols.size() + (has_ref ? 1 : 0); ++i) md += "---|";
            md += "\n";
            for (auto& r : t.rows) {
                md += "| " + row_name(r) + " |";
                for (auto& c : t.cols) md += " " + cell_text(t.cells.at({r, c, m})) + " |";
                if (has_ref) {
                    auto it = t.reference.find(r);
                    md += " " + (it == t.reference.end() ? std::string("–") : fmt::format("{:.1f}", it->second)) + " |";
                }
                md += "\n";
            }
            md += "\n";
        }
    }
    md += fmt::format("\nmean ± sample standard deviation over seeds (n = number of finished runs). {} runs, {:.1f} h of "
                      "training in total.\n",
                      t.runs, t.train_seconds / 3600.0);
    if (!t.competence_what.empty()) {
        // One table per view: the counts, then each metric over the competent runs and its max over all runs.
        auto grid = [&](const std::string& caption, const std::function<std::string(const std::string&, const std::string&)>& text) {
            md += caption + "\n\n| " + (t.rows_key.empty() ? std::string("") : t.rows_key) + " |";
            for (auto& c : t.cols) md += " " + (t.cols_key.empty() ? std::string("all runs") : t.cols_key + "=" + c) + " |";
            md += "\n|---|";
            for (std::size_t i = 0; i < t.cols.size(); ++i) md += "---|";
            md += "\n";
            for (auto& r : t.rows) {
                md += "| " + row_name(r) + " |";
                for (auto& c : t.cols) md += " " + text(r, c) + " |";
                md += "\n";
            }
            md += "\n";
        };
        std::size_t reached = 0, all = 0;
        for (auto& [k, v] : t.competent) reached += v.first, all += v.second;
        md += fmt::format("\n### Competence\n\nA run is competent when its in-distribution validation reached its target "
                          "({}) before it stopped (train.stop.target_metric): {} of {} runs. A model that has not learned "
                          "its task in distribution says nothing about extrapolation, so each metric is shown over the "
                          "competent runs only, and as the best run of each cell (the max over seeds and the other swept "
                          "values of the cell, as Ruoss et al. report).\n\n",
                          t.competence_what, reached, all);
        grid("**competent runs / runs**", [&](const std::string& r, const std::string& c) {
            auto it = t.competent.find({r, c});
            return it == t.competent.end() || it->second.second == 0 ? std::string("–")
                                                                      : fmt::format("{}/{}", it->second.first, it->second.second);
        });
        for (auto& m : t.metrics) {
            grid("**" + m + "**, competent runs only: mean ± sd (n)", [&](const std::string& r, const std::string& c) {
                return cell_text(t.competent_cells.at({r, c, m}));
            });
            grid("**" + m + "**, max over all runs", [&](const std::string& r, const std::string& c) {
                auto it = t.max_cells.find({r, c, m});
                return it == t.max_cells.end() ? std::string("–") : fmt::format("{:.2f}", it->second);
            });
        }
    }
    // A table of differences: one line per comparison with its paired-by-seed Stats and its bootstrap
    // (or null) for each metric, a bootstrap column beside each metric that has one. Returns whether any
    // bootstrap was shown.
    struct DiffLine {
        std::string name;
        std::vector<Stats> paired;                            // one per metric
        std::vector<const ReportTables::Bootstrap*> boot;     // one per metric, null when none
    };
    auto difference_table = [&](const std::vector<DiffLine>& lines) {
        md += "| " + t.rows_key + " |";
        std::vector<bool> has_boot(t.metrics.size(), false);
        for (std::size_t i = 0; i < t.metrics.size(); ++i) {
            md += " Δ " + t.metrics[i] + " (paired by seed) |";
            for (auto& l : lines) has_boot[i] = has_boot[i] || l.boot[i];
            if (has_boot[i]) md += " " + t.metrics[i] + ": paired bootstrap |";
        }
        const auto boots = std::size_t(std::count(has_boot.begin(), has_boot.end(), true));
        md += "\n|---|";
        for (std::size_t i = 0; i < t.metrics.size() + boots; ++i) md += "---|";
        md += "\n";
        for (auto& l : lines) {
            md += "| " + l.name + " |";
            for (std::size_t i = 0; i < t.metrics.size(); ++i) {
                md += " " + delta_text(l.paired[i]) + " |";
                if (has_boot[i]) md += " " + (l.boot[i] ? bootstrap_text(*l.boot[i]) : std::string("–")) + " |";
            }
            md += "\n";
        }
        return boots > 0;
    };
    auto find_or_null = [](const auto& map, const auto& key) -> const ReportTables::Bootstrap* {
        auto it = map.find(key);
        return it == map.end() ? nullptr : &it->second;
    };
    if (has_delta) {
        md += fmt::format("\n### Differences from the baseline ({})\n\n", t.baseline);
        std::vector<DiffLine> lines;
        for (auto& r : t.rows) {
            if (r == t.baseline) continue;
            DiffLine l{row_name(r), {}, {}};
            for (auto& m : t.metrics) {
                l.paired.push_back(t.paired.at({r, m}));
                l.boot.push_back(find_or_null(t.bootstrap, std::make_pair(r, m)));
            }
            lines.push_back(std::move(l));
        }
        const bool any_boot = difference_table(lines);
        md += fmt::format(
            "\nΔ (paired by seed): the row minus the baseline for the same seed (same data order and initial draws), "
            "mean over the seeds both have, [95% confidence interval] = mean ± t(0.975, n-1)·sd/√n, and the paired t "
            "statistic; † marks an interval that excludes 0 (the paired t-test over seeds at 5%): a difference that "
            "seed luck would rarely produce.\n");
        if (any_boot) {
            std::size_t resamples = 0;
            for (auto& [k, b] : t.bootstrap) resamples = std::max(resamples, b.resamples);
            md += fmt::format(
                "Paired bootstrap (Koehn 2004; sacreBLEU's --paired-bs, {} resamples of the test sentences, every seed "
                "of both rows scored on the same resample): p is two-sided, from the resampled differences of the seed "
                "means centred on their mean; [interval] = their 2.5th and 97.5th percentiles; ‡ marks p < 0.05. It "
                "measures how sure we are given this test set; the t-test above, given these seeds.\n",
                resamples);
        }
    }
    if (!t.contrasts.empty() && !t.metrics.empty()) {
        md += "\n### Contrasts between rows\n\n";
        std::vector<DiffLine> lines;
        for (auto& [a, b] : t.contrasts) {
            DiffLine l{a + " − " + b, {}, {}};
            for (auto& m : t.metrics) {
                l.paired.push_back(t.contrast_paired.at({a, b, m}));
                l.boot.push_back(find_or_null(t.contrast_bootstrap, std::make_tuple(a, b, m)));
            }
            lines.push_back(std::move(l));
        }
        const bool any_boot = difference_table(lines);
        md += "\nreport.contrasts: the first row minus the second, paired by seed over the seeds both have (mean [95% CI], "
              "paired t, † when the interval excludes 0)" +
              std::string(!any_boot ? "" : "; the paired bootstrap over test sentences as above (‡ when p < 0.05)") +
              ".\n";
    }
    if (!t.family_t.empty() || !t.family_bootstrap.empty()) {
        md += "\n### Multiplicity (Holm)\n\n";
        auto family_table = [&](const std::vector<ReportTables::Comparison>& fam, const std::string& test) {
            std::size_t kept = 0;
            for (auto& c : fam) kept += c.p_holm < 0.05;
            md += fmt::format("{}: a family of {} comparisons; {} of them have a Holm-adjusted p < 0.05.\n\n", test,
                              fam.size(), kept);
            md += "| comparison | metric | n | Δ | p | p (Holm) | after Holm |\n|---|---|---|---|---|---|---|\n";
            for (auto& c : fam)
                md += fmt::format("| {} − {} | {} | {} | {:+.2f} | {:.4f} | {:.4f} | {} |\n", row_name(c.a), row_name(c.b),
                                  c.metric, c.n, c.mean, c.p, c.p_holm, c.p_holm < 0.05 ? "holds" : "not shown");
            md += "\n";
        };
        if (!t.family_t.empty())
            family_table(t.family_t, "Paired t-test over seeds (two-sided), every comparison above with n >= 2");
        if (!t.family_bootstrap.empty())
            family_table(t.family_bootstrap, "Paired bootstrap over test sentences (two-sided), every comparison that has one");
        md += "Holm's step-down adjustment (Holm 1979) keeps the chance of one or more false findings in a family at "
              "most 5%: sorted by p, the i-th smallest of m is multiplied by m - i + 1 (and kept monotone). The verdict "
              "rule of results/README.md reads these adjusted values.\n";
    }
    if (!t.seeds.empty() && !t.metrics.empty() && !t.per_seed.empty()) {
        std::string what;
        for (auto& m : t.metrics) what += (what.empty() ? "" : " / ") + m;
        md += "\n### Per seed\n\n| " + (t.rows_key.empty() ? std::string("") : t.rows_key) + " |";
        for (auto& sd : t.seeds) md += " seed " + sd + " |";
        md += "\n|---|";
        for (std::size_t i = 0; i < t.seeds.size(); ++i) md += "---|";
        md += "\n";
        for (auto& r : t.rows) {
            md += "| " + row_name(r) + " |";
            for (auto& sd : t.seeds) {
                std::string cell;
                bool any = false;
                for (auto& m : t.metrics) {
                    auto it = t.per_seed.find({r, sd, m});
                    any = any || it != t.per_seed.end();
                    cell += (cell.empty() ? "" : " / ") + (it == t.per_seed.end() ? std::string("–") : fmt::format("{:.2f}", it->second));
                }
                md += " " + (any ? cell : std::string("–")) + " |";
            }
            md += "\n";
        }
        md += "\nEach finished run: " + what + ".\n";
    }
    if (!t.training.empty()) {
        md += "\n### Training\n\n| " + (t.rows_key.empty() ? std::string("") : t.rows_key) +
              " | updates | epochs | best step (lowest validation loss) | hours | stopped by |\n|---|---|---|---|---|---|\n";
        for (auto& r : t.rows) {
            auto it = t.training.find(r);
            if (it == t.training.end() || it->second.updates.n == 0) continue;
            const auto& tr = it->second;
            std::string why;
            for (auto& [reason, n] : tr.stop_reasons) why += fmt::format("{}{} ×{}", why.empty() ? "" : ", ", reason, n);
            const std::string best = tr.best_step.mean > 0 ? fmt::format("{:.0f} ± {:.0f}", tr.best_step.mean, tr.best_step.std)
                                                           : std::string("(not recorded)");
            md += fmt::format("| {} | {:.0f} ± {:.0f} | {:.1f} ± {:.1f} | {} | {:.2f} | {} |\n", row_name(r),
                              tr.updates.mean, tr.updates.std, tr.epochs.mean, tr.epochs.std, best, tr.hours.mean, why);
        }
        md += "\nmean ± sd over the row's runs; hours: training wall time of one run (mean).\n";
    }
    for (auto& split : t.bucket_splits) {
        md += fmt::format("\n### {} BLEU (tokenized) by source length\n\n| {} |", split, t.rows_key);
        for (auto& b : t.bucket_labels)
            md += fmt::format(" {} tokens ({} sentences) |", b, t.bucket_sentences.count({split, b}) ? t.bucket_sentences.at({split, b}) : 0);
        md += "\n|---|";
        for (std::size_t i = 0; i < t.bucket_labels.size(); ++i) md += "---|";
        md += "\n";
        for (auto& r : t.rows) {
            md += "| " + row_name(r) + " |";
            for (auto& b : t.bucket_labels) md += " " + cell_text(t.buckets.at({r, split, b})) + " |";
            md += "\n";
        }
        md += "\nCorpus BLEU of the sentences whose source has that many (Moses) tokens, mean ± sd over seeds.\n";
    }
    if (!t.commits.empty()) md += fmt::format("Code: commit {}. Machine: {}. Last run finished {}.\n", t.commits, t.machines, t.latest);
    return md;
}

std::string render_csv(const ReportTables& t) {
    const bool has_delta = !t.baseline.empty();
    std::string csv = fmt::format("row,column,metric,mean,std,n{}{}\n", t.reference.empty() ? "" : ",reference",
                                  has_delta ? ",delta_mean,delta_std,delta_n" : "");
    for (auto& r : t.rows)
        for (auto& c : t.cols)
            for (auto& m : t.metrics) {
                const Stats& s = t.cells.at({r, c, m});
                csv += fmt::format("{},{},{},{},{},{}", r, c, m, s.n ? fmt::format("{:.4f}", s.mean) : "",
                                   s.n > 1 ? fmt::format("{:.4f}", s.std) : "", s.n);
                if (!t.reference.empty()) {
                    auto it = t.reference.find(r);
                    csv += "," + (it == t.reference.end() ? std::string() : fmt::format("{}", it->second));
                }
                if (has_delta) {
                    auto it = t.paired.find({r, m});
                    const Stats d = it == t.paired.end() ? Stats{} : it->second;
                    csv += fmt::format(",{},{},{}", d.n ? fmt::format("{:.4f}", d.mean) : "",
                                       d.n > 1 ? fmt::format("{:.4f}", d.std) : "", d.n);
                }
                csv += "\n";
            }
    return csv;
}

LearningCurve read_learning_curve(const std::string& path) {
    LearningCurve c;
    std::map<long, double> step_loss;
    std::ifstream in(path);
    std::string line;
    for (std::size_t lineno = 1; std::getline(in, line); ++lineno) {
        const bool v = line.find("valid_loss") != std::string::npos;
        if (!v && line.find("train_loss") == std::string::npos) continue;
        const std::string where = fmt::format("{} line {}", path, lineno);
        const Json j = parse_json_or_throw<CheckpointError>(line, where);
        auto number = [&](const char* key, double* out) {  // false when absent or null (a non-finite value)
            if (!j.is_object() || !j.contains(key) || j[key].is_null()) return false;
            if (!j[key].is_number()) throw CheckpointError(fmt::format("{}: \"{}\" is not a number", where, key));
            *out = j[key].get<double>();
            return true;
        };
        double step = 0, val = 0, bleu = 0;
        if (!number("step", &step) || !(step >= 0 && step <= 1e15 && step == std::floor(step)))
            throw CheckpointError(fmt::format("{}: \"step\" is missing or not a whole number", where));
        if (!number(v ? "valid_loss" : "train_loss", &val)) continue;
        if (v) c.valid[static_cast<long>(step)] = val;  // a resumed run's repeat wins
        else step_loss[static_cast<long>(step)] = val;
        if (v && number("valid_bleu_tok", &bleu)) c.bleu[static_cast<long>(step)] = bleu;
    }
    long prev = 0;
    for (const auto& [step, loss] : c.valid) {
        double sum = 0;
        std::size_t n = 0;
        for (auto it = step_loss.upper_bound(prev); it != step_loss.end() && it->first <= step; ++it) sum += it->second, ++n;
        if (n) c.train[step] = sum / double(n);
        prev = step;
    }
    return c;
}

std::string render_json(const ReportTables& t) {
    auto bootstrap_json = [](const ReportTables::Bootstrap& b) {
        return Json{{"observed", json_number(b.observed, 6)}, {"ci_low", json_number(b.ci_low, 6)},
                    {"ci_high", json_number(b.ci_high, 6)}, {"p_value", json_number(b.p_value, 6)},
                    {"resamples", b.resamples}, {"seeds", b.seeds}};
    };
    auto stats = [](const Stats& st) {
        return std::make_pair(st.n ? json_number(st.mean, 6) : Json(nullptr), st.n > 1 ? json_number(st.std, 6) : Json(nullptr));
    };
    Json cells = Json::array();
    for (auto& [key, s] : t.cells) {
        const auto& [r, c, m] = key;
        const auto [mean, sd] = stats(s);
        Json cell = {{"row", r}, {"column", c}, {"metric", m}, {"mean", mean}, {"std", sd}, {"n", s.n}};
        if (auto it = t.reference.find(r); it != t.reference.end()) cell["reference"] = it->second;
        if (auto cp = t.competent.find({r, c}); cp != t.competent.end()) {
            const auto [cmean, csd] = stats(t.competent_cells.at(key));
            cell["competent"] = {{"reached", cp->second.first}, {"runs", cp->second.second}, {"mean", cmean}, {"std", csd},
                                 {"n", t.competent_cells.at(key).n}};
        }
        if (auto mx = t.max_cells.find(key); mx != t.max_cells.end()) cell["max"] = json_number(mx->second, 6);
        if (auto p = t.paired.find({r, m}); p != t.paired.end() && c.empty()) {
            const auto [dmean, dsd] = stats(p->second);
            cell["delta_vs_baseline"] = {{"baseline", t.baseline}, {"mean", dmean}, {"std", dsd}, {"n", p->second.n}};
            if (auto b = t.bootstrap.find({r, m}); b != t.bootstrap.end())
                cell["delta_vs_baseline"]["bootstrap"] = bootstrap_json(b->second);
        }
        cells.push_back(std::move(cell));
    }
    Json per_seed = Json::array();
    for (auto& [key, v] : t.per_seed) {
        const auto& [r, sd, m] = key;
        per_seed.push_back({{"row", r}, {"seed", sd}, {"metric", m}, {"value", json_number(v, 6)}});
    }
    Json contrasts = Json::array();
    for (auto& [a, b] : t.contrasts)
        for (auto& m : t.metrics) {
            const Stats& d = t.contrast_paired.at({a, b, m});
            const auto [dmean, dsd] = stats(d);
            Json c = {{"row", a}, {"minus", b}, {"metric", m}, {"mean", dmean}, {"std", dsd}, {"n", d.n}};
            if (auto bs = t.contrast_bootstrap.find({a, b, m}); bs != t.contrast_bootstrap.end())
                c["bootstrap"] = bootstrap_json(bs->second);
            contrasts.push_back(std::move(c));
        }
    auto family_json = [](const std::vector<ReportTables::Comparison>& fam) {
        Json out = Json::array();
        for (auto& c : fam)
            out.push_back({{"row", c.a}, {"minus", c.b}, {"metric", c.metric}, {"n", c.n}, {"mean", json_number(c.mean, 6)},
                           {"p", json_number(c.p, 6)}, {"p_holm", json_number(c.p_holm, 6)}, {"holds", c.p_holm < 0.05}});
        return out;
    };
    return json_document({{"title", t.title},
                          {"rows_key", t.rows_key},
                          {"columns_key", t.cols_key},
                          {"runs", t.runs},
                          {"commits", t.commits},
                          {"cells", cells},
                          {"contrasts", contrasts},
                          {"per_seed", per_seed},
                          {"family_t", family_json(t.family_t)},
                          {"family_bootstrap", family_json(t.family_bootstrap)}});
}

// The first metric against a numeric row value (e.g. BLEU vs k): relpos's mean ± sd over seeds, the
// paper's value on a right axis where a row has one, and the compared experiment's series (e.g. the
// 1,000-update tables) dashed. Skipped (with a note) while no row has a finished run.
static void plot_metric_vs_row(const ReportTables& t, const fs::path& pdir, std::string* note, std::vector<std::string>& made) {
    bool numeric = !t.rows_key.empty() && !t.metrics.empty();
    for (auto& r : t.rows) numeric = numeric && is_number(r);
    if (!numeric) return;
    const std::string m = t.metrics.front();
    std::string ours, compare, paper;  // data lines: this experiment, the compared one, the paper's values
    for (auto& r : t.rows) {
        const Stats& s = t.cells.at({r, t.cols.front(), m});
        if (s.n) ours += fmt::format("{} {:g} {:g}\n", r, s.mean, s.std);
        if (auto c = t.compare_cells.find({r, m}); c != t.compare_cells.end() && c->second.n)
            compare += fmt::format("{} {:g} {:g}\n", r, c->second.mean, c->second.std);
        // every row the paper has, whether or not this experiment has finished it yet
        if (auto it = t.reference.find(r); it != t.reference.end()) paper += fmt::format("{} {:g}\n", r, it->second);
    }
    const fs::path d = pdir / "metric_vs_row.dat", cd = pdir / "metric_vs_row.compare.dat",
                   pd = pdir / "metric_vs_row.paper.dat";
    if (ours.empty()) {  // gnuplot refuses an empty data file: nothing to draw yet
        fs::remove(d);
        if (note) *note += std::string(note->empty() ? "" : "; ") + "metric_vs_row: no row has a finished run yet, plot skipped";
        return;
    }
    std::ofstream(d) << ours;
    bool logx = true;
    for (auto& r : t.rows) logx = logx && std::strtod(r.c_str(), nullptr) >= 0;
    const int shift = logx ? 1 : 0;  // a log axis at value + 1 (so that k = 0 fits), labelled with the values
    std::string xtics;
    if (logx)
        for (auto& r : t.rows)
            xtics += fmt::format("{}\"{}\" {}", xtics.empty() ? "" : ", ", r, std::strtod(r.c_str(), nullptr) + 1);
    std::string ref, plots = fmt::format("'{}' using ($1+{}):2:3 with yerrorlines title 'relpos (mean ± sd over seeds)'", d.string(), shift);
    if (!paper.empty()) {
        std::ofstream(pd) << paper;
        ref = fmt::format("set ytics nomirror\nset y2tics\nset y2label '{} (right axis)'\n", gq(t.reference_title));
        plots += fmt::format(", '{}' using ($1+{}):2 with linespoints axes x1y2 title '{}'", pd.string(), shift,
                             gq(t.reference_title));
    }
    if (!t.compare_title.empty() && !compare.empty()) {
        std::ofstream(cd) << compare;
        plots += fmt::format(", '{}' using ($1+{}):2:3 with yerrorlines dt 2 title 'relpos at {} (mean ± sd)'", cd.string(), shift,
                             t.compare_title);
    }
    const fs::path s = pdir / "metric_vs_row.gp";
    std::ofstream(s) << fmt::format(
        "set terminal pngcairo size 800,550 noenhanced\nset output '{}'\nset title '{}'\nset xlabel '{}{}'\nset ylabel '{}'\n"
        "set grid\nset key bottom right\nset offsets graph 0.05, graph 0.05, graph 0.05, graph 0.05\n{}{}plot {}\n",
        (pdir / "metric_vs_row.png").string(), gq(t.title), gq(t.rows_key), logx ? " (log scale)" : "", gq(m),
        logx ? fmt::format("set logscale x 2\nset xtics ({})\n", xtics) : "", ref, plots);
    run_gnuplot(s);
    made.push_back((pdir / "metric_vs_row.png").string());
}

namespace {

bool plot_wanted(const ReportTables& t, const char* name) {
    return t.plots.empty() || std::find(t.plots.begin(), t.plots.end(), name) != t.plots.end();
}

// Everything the plots read from the runs, read (and checked) before any file is written: a broken
// metrics.jsonl is then exit code 2 with nothing written, not a half-made report.
struct PlotInputs {
    bool gnuplot = false;
    std::vector<RunResult> runs;
    std::vector<LearningCurve> curves;  // runs[i]'s, when the learning curves are drawn
};

PlotInputs read_plot_inputs(const fs::path& dir, const ReportTables& t) {
    PlotInputs in;
    in.gnuplot = have_gnuplot();
    if (!in.gnuplot) return in;
    in.runs = read_runs(dir);
    for (auto& r : in.runs) {
        // a shared run under this experiment's name for it (the link in runs/), as the tables name it
        if (const std::string own = r.dir.filename().string(); t.run_labels.count(own)) r.id = own;
        if (auto it = t.run_labels.find(r.id); it != t.run_labels.end()) r.labels = it->second;
    }
    if (plot_wanted(t, "learning_curves"))
        for (const auto& r : in.runs) in.curves.push_back(read_learning_curve((r.dir / "metrics.jsonl").string()));
    return in;
}

std::vector<std::string> draw_plots(const fs::path& dir, const ReportTables& t, const PlotInputs& in, std::string* note) {
    std::vector<std::string> made;
    if (!in.gnuplot) {
        if (note) *note = "gnuplot is not installed: plots skipped (apt-get install gnuplot-nox)";
        return made;
    }
    const fs::path pdir = dir / "plots";
    fs::create_directories(pdir);
    const auto& runs = in.runs;
    const auto wanted = [&](const char* name) { return plot_wanted(t, name); };
    // 1. learning curves: training loss (top) and validation loss (bottom) against updates, one colour per
    //    table cell (row, column), never repeated: the mean over the cell's seeds at each validation step
    //    (over the seeds that reached it) with a band from the lowest to the highest seed, and a mark where
    //    each run stopped. Training loss is the mean of the per-update losses since the previous
    //    validation. The per-run curves are written too (<run>.valid.dat, <run>.train.dat).
    if (wanted("learning_curves")) {
        using Curve = LearningCurve;
        std::vector<std::string> order;
        std::map<std::string, std::vector<Curve>> groups;
        for (std::size_t ri = 0; ri < runs.size(); ++ri) {
            const RunResult& r = runs[ri];
            const Curve& c = in.curves[ri];
            {
                std::ofstream out(pdir / (r.id + ".valid.dat"));
                for (auto& [step, loss] : c.valid) out << step << " " << loss << "\n";
                std::ofstream tout(pdir / (r.id + ".train.dat"));
                for (auto& [step, loss] : c.train) tout << step << " " << loss << "\n";
            }
            if (c.valid.empty()) continue;
            std::string g = t.rows_key.empty() ? "" : named_label(t.rows_key, label_of(r, t.rows_key));
            if (!t.cols_key.empty()) g += (g.empty() ? "" : " / ") + named_label(t.cols_key, label_of(r, t.cols_key));
            if (g.empty()) g = t.rows_key.empty() && t.cols_key.empty() ? "all runs" : r.id;
            if (!groups.count(g)) order.push_back(g);
            groups[g].push_back(std::move(c));
        }
        // Lines in the table's row order (then any others, e.g. runs no longer in the grid).
        std::vector<std::string> sorted;
        if (!t.rows_key.empty() && t.cols_key.empty())
            for (const auto& row : t.rows) {
                const std::string g = named_label(t.rows_key, row);
                if (groups.count(g)) sorted.push_back(g);
            }
        for (const auto& g : order)
            if (std::find(sorted.begin(), sorted.end(), g) == sorted.end()) sorted.push_back(g);
        order = sorted;
        // Distinct colours (Okabe-Ito, then Tableau), then evenly spaced hues: never two rows alike.
        static const char* kColours[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000",
                                         "#8C564B", "#7F7F7F", "#BCBD22", "#9467BD", "#17BECF"};
        auto colour = [&](std::size_t i) {
            if (i < std::size(kColours)) return std::string(kColours[i]);
            const double h = std::fmod(double(i) * 0.618033988749895, 1.0);  // golden-ratio hues
            const int r = int(127 + 120 * std::cos(6.283185 * h)), gr = int(127 + 120 * std::cos(6.283185 * (h - 1.0 / 3))),
                      b = int(127 + 120 * std::cos(6.283185 * (h - 2.0 / 3)));
            return fmt::format("#{:02X}{:02X}{:02X}", r, gr, b);
        };
        auto write_band = [&](const std::vector<Curve>& cs, int which, const fs::path& file) {  // 0 valid, 1 train, 2 bleu
            std::map<long, std::vector<double>> at;
            for (const auto& c : cs)
                for (const auto& [step, loss] : which == 1 ? c.train : which == 2 ? c.bleu : c.valid) at[step].push_back(loss);
            std::ofstream out(file);
            for (const auto& [step, v] : at) {
                double sum = 0;
                for (double x : v) sum += x;
                out << step << " " << sum / double(v.size()) << " " << *std::min_element(v.begin(), v.end()) << " "
                    << *std::max_element(v.begin(), v.end()) << " " << v.size() << "\n";
            }
        };
        std::string valid_plot, train_plot, bleu_plot;
        for (std::size_t gi = 0; gi < order.size(); ++gi) {
            const auto& cs = groups[order[gi]];
            const fs::path vd = pdir / fmt::format("curve_{}.dat", gi), td = pdir / fmt::format("train_{}.dat", gi),
                           sd = pdir / fmt::format("stops_{}.dat", gi);
            write_band(cs, 0, vd);
            write_band(cs, 1, td);
            bool has_bleu = false;
            for (const auto& c : cs) has_bleu = has_bleu || !c.bleu.empty();
            if (has_bleu) {
                const fs::path bd = pdir / fmt::format("bleu_{}.dat", gi);
                write_band(cs, 2, bd);
                bleu_plot += fmt::format("{}'{}' using 1:3:4 with filledcurves fs transparent solid 0.15 noborder lc rgb '{}' notitle, "
                                         "'{}' using 1:2 with lines lw 2 lc rgb '{}' notitle",
                                         bleu_plot.empty() ? "" : ", ", bd.string(), colour(gi), bd.string(), colour(gi));
            }
            {
                std::ofstream out(sd);
                for (const auto& c : cs) out << c.valid.rbegin()->first << " " << c.valid.rbegin()->second << "\n";
            }
            const std::string col = colour(gi);
            valid_plot += fmt::format("{}'{}' using 1:3:4 with filledcurves fs transparent solid 0.15 noborder lc rgb '{}' notitle, "
                                      "'{}' using 1:2 with lines lw 2 lc rgb '{}' title '{} (n={})', "
                                      "'{}' using 1:2 with points pt 7 ps 0.9 lc rgb '{}' notitle",
                                      valid_plot.empty() ? "" : ", ", vd.string(), col, vd.string(), col, gq(order[gi]),
                                      cs.size(), sd.string(), col);
            // gnuplot refuses a plot whose every data file is empty: a group without training-loss lines
            // (a damaged metrics.jsonl) is left out of the top panel.
            if (std::any_of(cs.begin(), cs.end(), [](const Curve& c) { return !c.train.empty(); }))
                train_plot += fmt::format("{}'{}' using 1:3:4 with filledcurves fs transparent solid 0.15 noborder lc rgb '{}' notitle, "
                                          "'{}' using 1:2 with lines lw 2 lc rgb '{}' notitle",
                                          train_plot.empty() ? "" : ", ", td.string(), col, td.string(), col);
        }
        if (!valid_plot.empty()) {
            const fs::path s = pdir / "learning_curves.gp";
            const bool bleu = !bleu_plot.empty(), train = !train_plot.empty();
            const int panels = 1 + (train ? 1 : 0) + (bleu ? 1 : 0);
            std::ofstream(s) << fmt::format(
                "set terminal pngcairo size 900,{} noenhanced\nset output '{}'\nset multiplot layout {},1 title '{}' . \"\\n\" . '{}' font ',10'\n"
                "set grid\nset key top right\nset xlabel 'update'\n{}"
                "set ylabel 'validation loss (nats/token)'\nset key top right\n"
                "plot {}\n{}unset multiplot\n",
                panels == 3 ? 1250 : panels == 2 ? 900 : 500, (pdir / "learning_curves.png").string(), panels,
                gq(t.title), "mean over seeds, band = lowest to highest seed, dot = where a run stopped",
                train ? fmt::format("set ylabel 'training loss (label-smoothed)'\nplot {}\n", train_plot) : std::string(),
                valid_plot,
                bleu ? fmt::format("set ylabel 'validation BLEU (greedy, tokenized)'\nplot {}\n", bleu_plot) : std::string());
            run_gnuplot(s);
            made.push_back((pdir / "learning_curves.png").string());
        }
    }
    // 2. metric against the row value (e.g. BLEU vs k), error bars over seeds, paper beside ours
    if (wanted("metric_vs_row")) plot_metric_vs_row(t, pdir, note, made);
    // 3. metric against length: the metrics written <split>.<metric>@<n> (perplexity by evaluation window,
    //    accuracy by input length), one line per row with a band of ± one sd over seeds; one plot per
    //    <split>.<metric> the report lists with some @<n> (and per column of the table). Each line has
    //    every length the runs measured, the other splits' too (e.g. the training lengths from val beside
    //    the longer test lengths, a dashed line where the plotted split starts); a log length axis when
    //    the lengths span 4x or more.
    if (wanted("metric_vs_length")) {
        std::set<std::string> bases;  // "test.accuracy", "test.ppl"
        for (const auto& m : t.metrics) {
            const auto at = m.rfind('@');
            if (at != std::string::npos && is_number(m.substr(at + 1))) bases.insert(m.substr(0, at));
        }
        static const char* colours[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b",
                                        "#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#000000", "#aec7e8",
                                        "#98df8a", "#ff9896", "#c5b0d5"};
        for (const auto& base : bases) {
            const auto dot = base.find('.');
            const std::string split = dot == std::string::npos ? "" : base.substr(0, dot);
            const std::string what = dot == std::string::npos ? base : base.substr(dot + 1);  // "accuracy"
            // n -> the metric drawn there: the base split's own, else another split's of the same metric
            std::map<double, std::string> points;
            double split_from = -1;
            for (const auto& [key, st] : t.length_cells) {
                const std::string& m = std::get<2>(key);
                const auto at = m.rfind('@'), d = m.find('.');
                if (d == std::string::npos || m.substr(d + 1, at - d - 1) != what) continue;
                const double n = std::strtod(m.c_str() + at + 1, nullptr);
                const bool own = m.compare(0, at, base) == 0;
                if (own && (split_from < 0 || n < split_from)) split_from = n;
                auto it = points.find(n);
                if (it == points.end() || (own && it->second.compare(0, base.size(), base) != 0)) points[n] = m;
            }
            if (points.empty()) continue;
            const bool mixed = std::any_of(points.begin(), points.end(),
                                           [&](const auto& p) { return p.second.compare(0, base.size() + 1, base + "@") != 0; });
            for (const auto& col : t.cols) {
                const std::string stem = "metric_vs_length" + (col.empty() ? "" : "." + safe_name(col)) + "." + safe_name(base);
                std::string plot;
                std::size_t i = 0;
                for (const auto& row : t.rows) {
                    const fs::path d = pdir / (stem + "." + safe_name(row) + ".dat");
                    std::string text;
                    for (const auto& [x, m] : points) {
                        auto c = t.length_cells.find({row, col, m});
                        if (c == t.length_cells.end() || c->second.n == 0) continue;
                        text += fmt::format("{} {} {} {}\n", x, c->second.mean, c->second.mean - c->second.std,
                                            c->second.mean + c->second.std);
                    }
                    if (text.empty()) continue;  // a row with no finished run at this column
                    std::ofstream(d) << text;
                    const char* colour = colours[i++ % (sizeof colours / sizeof *colours)];
                    plot += fmt::format("{}'{}' using 1:3:4 with filledcurves fc rgb '{}' fs transparent solid 0.12 notitle, "
                                        "'' using 1:2 with linespoints lc rgb '{}' lw 2 pt 7 ps 0.7 title '{}'",
                                        plot.empty() ? "" : ", ", d.string(), colour, colour, gq(row));
                }
                if (plot.empty()) continue;
                const bool ppl = what.find("ppl") != std::string::npos;
                const bool percent = what.find("accuracy") != std::string::npos;  // accuracies are in %
                const double lo = points.begin()->first, hi = points.rbegin()->first;
                const bool logx = lo > 0 && hi / lo >= 4 && !mixed;
                std::string extra;
                if (percent) extra += "set yrange [-2:102]\n";
                if (mixed && split_from > lo)
                    extra += fmt::format("set arrow from {0}, graph 0 to {0}, graph 1 nohead dt 2 lc rgb '#555555'\n"
                                         "set label '{1} ->' at {0}, graph 0.97 offset 0.5, 0 font ',9'\n",
                                         split_from - 0.5, split);
                const std::string title = base + (col.empty() ? "" : " — " + col) +
                                          (mixed ? fmt::format(" (lengths below {} from the other splits)", split_from) : "");
                const fs::path sfile = pdir / (stem + ".gp");
                std::ofstream(sfile) << fmt::format(
                    "set terminal pngcairo size 1000,720 noenhanced\nset output '{}'\nset title '{}'\nset xlabel "
                    "'length{}'\nset ylabel '{}'\n{}{}{}set grid\nset key below font ',9' maxrows 5\nplot {}\n",
                    (pdir / (stem + ".png")).string(), gq(title), logx ? " (log scale)" : "",
                    gq(what) + " (mean ± sd over seeds)", logx ? "set logscale x 2\n" : "",
                    // a log axis autoscales to whole decades, which squeezed 95-200 into a tenth of the
                    // plot: fixed to the data instead, with a margin, and tics at 1-2-5 steps
                    ppl ? "set logscale y\nset autoscale yfix\nset offsets 0, 0, graph 0.05, graph 0.05\n"
                          "set ytics (10, 20, 50, 60, 70, 80, 90, 100, 110, 120, 140, 160, 180, 200, 250, 300, 400, "
                          "500, 700, 1000, 2000, 5000, 10000)\n"
                        : "",
                    extra, plot);
                run_gnuplot(sfile);
                made.push_back((pdir / (stem + ".png")).string());
            }
        }
    }
    // 4. attention heat maps of one sentence (last encoder layer, mean over heads), one per run
    for (const auto& r : runs) {
        if (!wanted("attention")) break;
        const fs::path a = r.dir / "attention.tsv";
        if (!fs::exists(a)) continue;
        const fs::path s = pdir / (r.id + ".attention.gp");
        const fs::path png = pdir / (r.id + ".attention.png");
        std::ofstream(s) << fmt::format(
            "set terminal pngcairo size 700,600 noenhanced\nset output '{}'\nset title '{}: last encoder layer'\n"
            "set xlabel 'key position'\nset ylabel 'query position'\nset autoscale xfix\nset autoscale yfix\nset yrange [] reverse\nset palette grey negative\n"
            "plot '{}' matrix with image notitle\n",
            png.string(), r.id, a.string());
        run_gnuplot(s);
        made.push_back(png.string());
    }
    return made;
}

// A path the report writes that something else occupies (a directory named report.md, a file named
// plots): one sentence naming it, exit code 2, before anything is written.
void check_output_path(const fs::path& p, bool directory, const std::string& what) {
    std::error_code ec;
    const fs::file_status st = fs::symlink_status(p, ec);
    if (!fs::exists(st)) return;
    if (directory ? fs::is_directory(p, ec) : fs::is_regular_file(p, ec)) return;
    const std::string is = fs::is_symlink(st) && !fs::exists(p, ec) ? "a symbolic link that leads nowhere"
                           : fs::is_directory(p, ec)                 ? "a directory"
                           : fs::is_regular_file(p, ec)              ? "a file"
                                                                     : "not a regular file";
    throw ConfigError(fmt::format("{} is {} where relpos report writes {} ({}); move it away and run the report again",
                                  p.string(), is, what, directory ? "a directory" : "a file"));
}

}  // namespace

std::vector<std::string> render_plots(const std::string& dir, const ReportTables& t, std::string* note) {
    return draw_plots(dir, t, read_plot_inputs(dir, t), note);
}

int cmd_report(const std::string& dir) {
    // Everything is read and checked first, then written: exit code 2 leaves the directory as it was.
    ReportTables t = build_report(dir);
    if (t.runs == 0) throw ConfigError(fmt::format("{}: no finished runs yet (runs/*/results.json)", dir));
    const fs::path d(dir);
    const std::vector<std::pair<std::string, std::string>> tables = {
        {"report.md", render_markdown(t)}, {"report.csv", render_csv(t)}, {"report.json", render_json(t)}};
    const PlotInputs plot_inputs = read_plot_inputs(d, t);
    for (const auto& [name, text] : tables) {
        const std::string format = name == "report.md" ? "Markdown" : name == "report.csv" ? "CSV" : "JSON";
        check_output_path(d / name, false, "its " + format + " table");
        check_output_path(d / (name + ".tmp"), false, "the new " + name + " before it replaces the old one");
    }
    if (plot_inputs.gnuplot) check_output_path(d / "plots", true, "the plots");
    // Each table goes to <name>.tmp, and only once all three are complete are they renamed into place;
    // a failure (disk full) removes the .tmp files and leaves the old tables.
    std::vector<std::pair<fs::path, std::string>> files;
    for (const auto& [name, text] : tables) files.emplace_back(d / name, text);
    write_files_atomic(files);
    const std::string& md = tables[0].second;
    std::string note;
    auto plots = draw_plots(d, t, plot_inputs, &note);
    fmt::print("{}\n", md);
    fmt::print("written: {}/report.md, report.csv, report.json\n", dir);
    for (auto& p : plots) fmt::print("plot: {}\n", p);
    if (!note.empty()) fmt::print("note: {}\n", note);
    return 0;
}

}  // namespace relpos
