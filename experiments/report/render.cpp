// The report's tables as text: Markdown (the page people read), CSV and JSON.
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
#include <tuple>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "experiments/config/config.hpp"
#include "experiments/data/corpus.hpp"
#include "experiments/data/json.hpp"
#include "experiments/report/report.hpp"
#include "experiments/report/runs.hpp"
#include "experiments/train/checkpoint.hpp"
#include "experiments/eval/significance.hpp"
#include "experiments/tasks/metric_names.hpp"

namespace relpos {

namespace fs = std::filesystem;

namespace {


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

std::string cell_text(const Stats& s) {
    if (s.n == 0) return "–";
    if (s.n == 1) return fmt::format("{:.2f} (n=1)", s.mean);
    return fmt::format("{:.2f} ± {:.2f} (n={})", s.mean, s.std, s.n);
}

}  // namespace

std::string render_markdown(const ReportTables& t) {
    std::string md = fmt::format("## {}\n\n", t.title);
    if (!t.description.empty()) md += t.description + "\n\n";
    if (t.sweep_finished < t.sweep_points)
        md += fmt::format("**{} of the sweep's {} runs have finished**, and this report is of them alone (`relpos run "
                          "CONFIG --list` names the others: not trained, or training): a row short of runs says so in its n, "
                          "and the intervals, tests and multiplicity family are those of the finished runs.\n\n",
                          t.sweep_finished, t.sweep_points);
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
    // Wall time; the CPU time (core-hours) where runs record it (since 2026-11-28): a busy machine stretches
    // the one and not the other.
    std::string cpu;
    if (t.runs_with_cpu > 0)
        cpu = fmt::format(" ({:.1f} core-hours of CPU time{})", t.train_cpu_seconds / 3600.0,
                          t.runs_with_cpu == t.runs ? std::string()
                                                    : fmt::format(" for the {} runs that record it", t.runs_with_cpu));
    md += fmt::format("\nmean ± sample standard deviation over seeds (n = number of finished runs). {} runs, {:.1f} h of "
                      "training in total{}.\n",
                      t.runs, t.train_seconds / 3600.0, cpu);
    // report.compare: the other experiment's matched rows with every metric (the main table shows only the
    // first), e.g. the reference trained at the longest window beside a train-short study.
    if (!t.compare_title.empty()) {
        std::string lines;  // the rows the other experiment has a finished run of
        for (auto& r : t.rows) {
            std::string line = "| " + row_name(r) + " |";
            bool any = false;
            for (auto& m : t.metrics) {
                auto c = t.compare_cells.find({r, m});
                any = any || (c != t.compare_cells.end() && c->second.n > 0);
                line += " " + (c == t.compare_cells.end() ? std::string("–") : cell_text(c->second)) + " |";
            }
            if (any) lines += line + "\n";
        }
        if (!lines.empty()) {
            md += fmt::format("\n### {}\n\n{} ({}): its rows with this table's labels, mean ± sd over its seeds (n).\n\n| {} |",
                              t.compare_title, t.compare_title, t.compare_dir, t.rows_key);
            for (auto& m : t.metrics) md += " " + m + " |";
            md += "\n|---|";
            for (std::size_t i = 0; i < t.metrics.size(); ++i) md += "---|";
            md += "\n" + lines;
        }
    }
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
            "seed luck would rarely produce.{}\n",
            t.competence_what.empty() ? "" : " Only competent runs are paired: a seed whose run in either row did not "
                                             "reach its competence target is left out (n counts the seeds kept).");
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
        md += "\nreport.contrasts: the first row minus the second, paired by seed over the seeds both have" +
              std::string(t.competence_what.empty() ? "" : " with a competent run") + " (mean [95% CI], "
              "paired t, † when the interval excludes 0)" +
              std::string(!any_boot ? "" : "; the paired bootstrap over test sentences as above (‡ when p < 0.05)") +
              ".\n";
    }
    if (!t.family_t.empty() || !t.family_bootstrap.empty()) {
        md += "\n### Multiplicity (Holm)\n\n";
        auto family_table = [&](const std::vector<ReportTables::Comparison>& fam, const std::string& test, bool seed_paired) {
            std::size_t kept = 0;
            for (auto& c : fam) kept += c.p_holm < 0.05;
            md += fmt::format("{}: a family of {} comparisons; {} of them have a Holm-adjusted p < 0.05.", test,
                              fam.size(), kept);
            if (seed_paired) {
                // What the family's size asks of a seed-paired t: the first to hold needs p < 0.05 / m, so
                // "not shown" with few seeds can be a matter of power, not of size.
                std::set<std::size_t> ns;
                for (auto& c : fam) ns.insert(c.n);
                std::string need;
                for (auto n : ns)
                    if (n >= 2)
                        need += fmt::format("{}|t| > {:.1f} with {} seeds ({} df)", need.empty() ? "" : ", ",
                                            t_for_two_sided_p(0.05 / double(fam.size()), n - 1), n, n - 1);
                if (!need.empty())
                    md += fmt::format(" The first comparison to hold needs p < 0.05/{} = {:.2g}: {}; \"not shown\" "
                                      "is then as much a matter of seeds as of the size of a difference.",
                                      fam.size(), 0.05 / double(fam.size()), need);
            }
            md += "\n\n";
            md += "| comparison | metric | n | Δ | p | p (Holm) | after Holm |\n|---|---|---|---|---|---|---|\n";
            for (auto& c : fam)
                md += fmt::format("| {} − {} | {} | {} | {:+.2f} | {:.4f} | {:.4f} | {} |\n", row_name(c.a), row_name(c.b),
                                  c.metric, c.n, c.mean, c.p, c.p_holm, c.p_holm < 0.05 ? "holds" : "not shown");
            md += "\n";
        };
        if (!t.family_t.empty())
            family_table(t.family_t, "Paired t-test over seeds (two-sided), every comparison above with n >= 2", true);
        if (!t.family_bootstrap.empty())
            family_table(t.family_bootstrap, "Paired bootstrap over test sentences (two-sided), every comparison that has one", false);
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
    if (!t.commits.empty()) {
        std::string by;
        for (const auto& [machines, ids] : t.runs_by_machines) {
            by += fmt::format("{}{} on {}", by.empty() ? " Runs by the machines that trained them (in that order): " : "; ",
                              ids.size(), machines);
            if (ids.size() <= 6) by += fmt::format(" ({})", fmt::join(ids, ", "));
        }
        md += fmt::format("Code: commit {}. Machine: {}.{}{} Last run finished {}.\n", t.commits, t.machines, by,
                          by.empty() ? "" : ".", t.latest);
    }
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
    Json compare = nullptr;
    if (!t.compare_title.empty()) {
        Json cc = Json::array();
        for (auto& [key, st] : t.compare_cells) {
            if (st.n == 0) continue;
            const auto [mean, sd] = stats(st);
            cc.push_back({{"row", key.first}, {"metric", key.second}, {"mean", mean}, {"std", sd}, {"n", st.n}});
        }
        compare = {{"title", t.compare_title}, {"dir", t.compare_dir}, {"cells", cc}};
    }
    Json doc = {{"title", t.title},
                {"rows_key", t.rows_key},
                {"columns_key", t.cols_key},
                {"runs", t.runs},
                {"commits", t.commits},
                {"machines", t.machines},
                {"cells", cells},
                {"contrasts", contrasts},
                {"per_seed", per_seed},
                {"family_t", family_json(t.family_t)},
                {"family_bootstrap", family_json(t.family_bootstrap)}};
    if (!compare.is_null()) doc["compare"] = compare;  // only with report.compare
    if (!t.runs_by_machines.empty()) {  // only when the runs differ in the machines that trained them
        Json by = Json::object();
        for (const auto& [machines, ids] : t.runs_by_machines) by[machines] = ids;
        doc["runs_by_machines"] = by;
    }
    if (!t.position_paired.empty()) {  // only where the runs wrote a loss by position: the paired plot's numbers
        Json pp = Json::array();
        for (const auto& [a, b] : t.position_pairs)  // in the pairs' order, each family by position
            for (auto it = t.position_paired.lower_bound({a, b, ""});
                 it != t.position_paired.end() && std::get<0>(it->first) == a && std::get<1>(it->first) == b; ++it)
                for (const auto& [position, d] : it->second) {
                    const double half = d.n > 1 ? t_critical_95(d.n - 1) * d.std / std::sqrt(double(d.n)) : 0;
                    const auto [dmean, dsd] = stats(d);
                    pp.push_back({{"row", a}, {"minus", b}, {"metric", std::get<2>(it->first)}, {"position", long(position)},
                                  {"n", d.n}, {"mean", dmean}, {"std", dsd},
                                  {"ci_low", d.n > 1 ? json_number(d.mean - half, 6) : Json(nullptr)},
                                  {"ci_high", d.n > 1 ? json_number(d.mean + half, 6) : Json(nullptr)}});
                }
        doc["position_paired"] = pp;
    }
    if (!t.reference.empty()) {  // only with report.reference: the published column, so prose can cite it checked
        Json values = Json::object();
        for (auto& [row, v] : t.reference) values[row] = v;
        doc["reference"] = {{"title", t.reference_title}, {"values", values}};
    }
    return json_document(doc);
}

}  // namespace relpos
