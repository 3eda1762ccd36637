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


// "+1.23 [+0.50, +1.96] n=5 t=4.7": the mean paired difference, its 95% confidence interval (mean ±
// t(0.975, n-1) · sd/√n, unadjusted) and the paired t statistic. No mark of significance: whether a
// difference holds is the Holm-adjusted verdict of the report's family (verdict_text), never the interval's.
std::string delta_text(const Stats& s) {
    if (s.n == 0) return "–";
    if (s.n == 1) return fmt::format("{:+.2f} (n=1)", s.mean);
    if (s.std == 0) return fmt::format("{:+.2f} (n={}, no spread)", s.mean, s.n);
    const double se = s.std / std::sqrt(double(s.n)), half = t_critical_95(s.n - 1) * se;
    return fmt::format("{:+.2f} [{:+.2f}, {:+.2f}] n={} t={:.1f}", s.mean, s.mean - half, s.mean + half, s.n, s.mean / se);
}

// A p-value as the tables print it: three decimals, or two significant digits below 0.001.
std::string p_text(double p) { return p >= 0.001 || p == 0 ? fmt::format("{:.3f}", p) : fmt::format("{:.1e}", p); }

// What a comparison's interval is read as, after it: " — p(Holm) = 0.012, holds" for a member of the
// report's family, " — too few seeds: no verdict" (or validation split, no spread) for the others, "" for a
// comparison the report does not test.
std::string verdict_text(const ReportTables::Comparison* c) {
    if (!c) return "";
    if (!c->no_verdict.empty()) return fmt::format(" — {}: no verdict", c->no_verdict);
    if (std::isfinite(c->p_bound)) {  // its study training, comparisons untested: the bound decides (verdict_word)
        if (c->p >= kVerdictAlpha) return fmt::format(" — p = {} before any adjustment, not shown", p_text(c->p));
        return fmt::format(" — p(Holm) between {} and {} over the stated family, {}", p_text(c->p), p_text(c->p_bound),
                           verdict_word(*c));
    }
    return fmt::format(" — p(Holm) = {}, {}", p_text(c->p_holm), verdict_word(*c));
}

// The sentence every table of intervals with verdicts carries.
std::string verdict_explained(const ReportTables& t) {
    const bool interim = reads_interim(t.family_t) || reads_interim(t.family_bootstrap);
    return fmt::format(
        "The interval is the unadjusted 95% one; the verdict reads p(Holm), the p-value Holm-adjusted over the report's "
        "family of comparisons (section Multiplicity): \"holds\" when p(Holm) < {0}, \"not shown\" when p(Holm) >= {0}, "
        "so an interval that excludes 0 can still be \"not shown\". Comparisons on the validation split (it chose the "
        "stopping point and the checkpoint), with fewer than {1} paired seeds (\"too few seeds\") or with no spread "
        "between seeds carry no verdict and are not members of the family (not counted in Holm's m).{2}",
        kVerdictAlpha, kMinVerdictSeeds,
        interim ? " While the study trains with comparisons of its config untested, a verdict reads the bound on its "
                  "Holm p over every comparison the config states (section Multiplicity)."
                : "");
}

std::string bootstrap_text(const ReportTables::Bootstrap& b, const ReportTables::Comparison* c) {
    if (b.seeds == 0) return "–";
    return fmt::format("p={} (Δ {:+.2f} [{:+.2f}, {:+.2f}]){}", p_text(b.p_value), b.observed, b.ci_low, b.ci_high,
                       verdict_text(c));
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
            if (has_delta)
                md += " " + (r == t.baseline ? std::string("(baseline)")
                                             : delta_text(t.paired.at({r, t.metrics.front()})) +
                                                   verdict_text(find_comparison(t, r, t.baseline, t.metrics.front(), false))) + " |";
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
                          "its task in distribution says nothing about extrapolation, so the tables below show each metric "
                          "over the competent runs only (the table above counts every finished run), and as the best run of each cell (the max over seeds and the other swept "
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
        std::string name, a, b;                               // the line's comparison: a minus b
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
                md += " " + delta_text(l.paired[i]) + verdict_text(find_comparison(t, l.a, l.b, t.metrics[i], false)) + " |";
                if (has_boot[i])
                    md += " " + (l.boot[i] ? bootstrap_text(*l.boot[i], find_comparison(t, l.a, l.b, t.metrics[i], true))
                                           : std::string("–")) + " |";
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
            DiffLine l{row_name(r), r, t.baseline, {}, {}};
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
            "statistic. {}{}\n",
            verdict_explained(t),
            t.competence_what.empty() ? "" : " Only competent runs are paired: a seed whose run in either row did not "
                                             "reach its competence target is left out (n counts the seeds kept).");
        if (any_boot) {
            std::size_t resamples = 0;
            for (auto& [k, b] : t.bootstrap) resamples = std::max(resamples, b.resamples);
            md += fmt::format(
                "Paired bootstrap (Koehn 2004; sacreBLEU's --paired-bs, {} resamples of the test sentences, every seed "
                "of both rows scored on the same resample): p is two-sided, from the resampled differences of the seed "
                "means centred on their mean; [interval] = their 2.5th and 97.5th percentiles (unadjusted); the verdict "
                "reads p(Holm), the p adjusted over the bootstrap's own family. It measures how sure we are given this "
                "test set; the t-test above, given these seeds.\n",
                resamples);
        }
    }
    if (!t.contrasts.empty() && !t.metrics.empty()) {
        md += "\n### Contrasts between rows\n\n";
        std::vector<DiffLine> lines;
        for (auto& [a, b] : t.contrasts) {
            DiffLine l{a + " − " + b, a, b, {}, {}};
            for (auto& m : t.metrics) {
                l.paired.push_back(t.contrast_paired.at({a, b, m}));
                l.boot.push_back(find_or_null(t.contrast_bootstrap, std::make_tuple(a, b, m)));
            }
            lines.push_back(std::move(l));
        }
        const bool any_boot = difference_table(lines);
        md += "\nreport.contrasts: the first row minus the second, paired by seed over the seeds both have" +
              std::string(t.competence_what.empty() ? "" : " with a competent run") + " (mean [95% CI], paired t)" +
              std::string(!any_boot ? "" : "; the paired bootstrap over test sentences as above") + ". " +
              verdict_explained(t) + "\n";
    }
    const bool any_comparison = !t.family_t.empty() || !t.family_bootstrap.empty() || !t.no_verdict_t.empty() ||
                                !t.no_verdict_bootstrap.empty();
    if (any_comparison) {
        md += "\n### Multiplicity (Holm)\n\n";
        auto interval = [](const ReportTables::Comparison& c) {
            return std::isfinite(c.ci_low) ? fmt::format("{:+.2f} [{:+.2f}, {:+.2f}]", c.mean, c.ci_low, c.ci_high)
                                           : fmt::format("{:+.2f}", c.mean);
        };
        auto family_table = [&](const std::vector<ReportTables::Comparison>& fam, const std::string& test, bool seed_paired) {
            std::size_t kept = 0;
            for (auto& c : fam) kept += holds(c);
            const bool interim = reads_interim(fam);
            if (interim) {
                md += fmt::format("{}: {} of the {} comparisons the config states on test splits are tested so far, and the "
                                  "study is training. Holm's adjusted p over the stated {} is at least a comparison's p "
                                  "and at most {} times it (p bound), whatever the others show: {} of them hold (p bound < {}), "
                                  "a comparison with p >= {} is not shown, and the others wait for the family. The column "
                                  "p (Holm) adjusts over the {} tested so far.", test, fam.size(), t.stated_tests,
                                  t.stated_tests, t.stated_tests, kept, kVerdictAlpha, kVerdictAlpha, fam.size());
            } else {
                md += fmt::format("{}: a family of {} comparisons (m = {}); {} of them hold (Holm-adjusted p < {}).", test,
                                  fam.size(), fam.size(), kept, kVerdictAlpha);
            }
            if (seed_paired && !fam.empty()) {
                // What the family's size asks of a seed-paired t: the first to hold needs p < 0.05 / m, so
                // "not shown" with few seeds can be a matter of power, not of size.
                std::set<std::size_t> ns;
                for (auto& c : fam) ns.insert(c.n);
                std::string need;
                for (auto n : ns)
                    if (n >= 2)
                        need += fmt::format("{}|t| > {:.1f} with {} seeds ({} df)", need.empty() ? "" : ", ",
                                            t_for_two_sided_p(kVerdictAlpha / double(fam.size()), n - 1), n, n - 1);
                if (!need.empty())
                    md += fmt::format(" The first comparison to hold needs p < 0.05/{} = {:.2g}: {}; \"not shown\" "
                                      "is then as much a matter of seeds as of the size of a difference.",
                                      fam.size(), kVerdictAlpha / double(fam.size()), need);
            }
            md += "\n\n";
            if (fam.empty()) return;
            md += "| comparison | metric | n | Δ [95% CI, unadjusted] | p | p (Holm) | verdict |\n|---|---|---|---|---|---|---|\n";
            for (auto& c : fam)
                md += fmt::format("| {} − {} | {} | {} | {} | {} | {}{} | {} |\n", row_name(c.a), row_name(c.b), c.metric, c.n,
                                  interval(c), p_text(c.p), p_text(c.p_holm),
                                  interim ? fmt::format(" (bound {})", p_text(c.p_bound)) : std::string(), verdict_word(c));
            md += "\n";
        };
        auto outside_table = [&](const std::vector<ReportTables::Comparison>& out, const std::string& test) {
            if (out.empty()) return;
            md += fmt::format("{}, no verdict (not in the family): {} comparisons.\n\n"
                              "| comparison | metric | n | Δ [95% CI, unadjusted] | why no verdict |\n|---|---|---|---|---|\n",
                              test, out.size());
            for (auto& c : out)
                md += fmt::format("| {} − {} | {} | {} | {} | {} |\n", row_name(c.a), row_name(c.b), c.metric, c.n,
                                  interval(c), c.no_verdict);
            md += "\n";
        };
        const std::string t_test = fmt::format("Paired t-test over seeds (two-sided), the comparisons above on test splits with "
                                               "n >= {} and a spread", kMinVerdictSeeds);
        family_table(t.family_t, t_test, true);
        outside_table(t.no_verdict_t, "Paired t-test over seeds");
        if (!t.family_bootstrap.empty() || !t.no_verdict_bootstrap.empty()) {
            family_table(t.family_bootstrap, fmt::format("Paired bootstrap over test sentences (two-sided), the comparisons "
                                                         "that have one on test splits with n >= {}", kMinVerdictSeeds),
                         false);
            outside_table(t.no_verdict_bootstrap, "Paired bootstrap over test sentences");
        }
        md += "Holm's step-down adjustment (Holm 1979) keeps the chance of one or more false findings in a family at "
              "most 5%: sorted by p, the i-th smallest of m is multiplied by m - i + 1 (and kept monotone). " +
              verdict_explained(t) + " The verdict rule of results/README.md reads these adjusted values.\n";
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
        // The best step is the checkpoint the metrics come from; how it was chosen is each run's own (the
        // validation loss, or a gated run's target metric), so it is named per row, never assumed.
        md += "\n### Training\n\n| " + (t.rows_key.empty() ? std::string("") : t.rows_key) +
              " | updates | epochs completed | best step | best checkpoint by | hours | stopped by |\n|---|---|---|---|---|---|---|\n";
        for (auto& r : t.rows) {
            auto it = t.training.find(r);
            if (it == t.training.end() || it->second.updates.n == 0) continue;
            const auto& tr = it->second;
            std::string why, by;
            for (auto& [reason, n] : tr.stop_reasons) why += fmt::format("{}{} ×{}", why.empty() ? "" : ", ", reason, n);
            for (auto& [criterion, n] : tr.best_by) {
                by += (by.empty() ? "" : ", ") + (tr.best_by.size() == 1 ? criterion : fmt::format("{} ×{}", criterion, n));
            }
            const std::string best = tr.best_step.mean > 0 ? fmt::format("{:.0f} ± {:.0f}", tr.best_step.mean, tr.best_step.std)
                                                           : std::string("(not recorded)");
            md += fmt::format("| {} | {:.0f} ± {:.0f} | {:.1f} ± {:.1f} | {} | {} | {:.2f} | {} |\n", row_name(r),
                              tr.updates.mean, tr.updates.std, tr.epochs.mean, tr.epochs.std, best, by, tr.hours.mean, why);
        }
        md += "\nmean ± sd over the row's runs; best step: the update of the checkpoint the metrics come from, chosen "
              "by the criterion named beside it (the lowest validation loss, or for runs with a competence target, "
              "train.stop.target_metric, the highest value of that metric); hours: training wall time of one run (mean).\n";
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
    // What a comparison's figures are read as (added 2026-12-06): the unadjusted 95% interval, and for a member
    // of the family p_holm and verdict ("holds" / "not shown"); for the others verdict null and no_verdict
    // (why: "validation split", "too few seeds", "no spread").
    auto add_verdict = [&](Json& j, const ReportTables::Comparison* c) {
        if (!c) return;
        j["ci_low"] = json_number(c->ci_low, 6);
        j["ci_high"] = json_number(c->ci_high, 6);
        if (c->no_verdict.empty()) {
            j["p_holm"] = json_number(c->p_holm, 6);
            j["verdict"] = verdict_word(*c);
        } else {
            j["verdict"] = nullptr;
            j["no_verdict"] = c->no_verdict;
        }
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
            add_verdict(cell["delta_vs_baseline"], find_comparison(t, r, t.baseline, m, false));
            if (auto b = t.bootstrap.find({r, m}); b != t.bootstrap.end()) {
                cell["delta_vs_baseline"]["bootstrap"] = bootstrap_json(b->second);
                add_verdict(cell["delta_vs_baseline"]["bootstrap"], find_comparison(t, r, t.baseline, m, true));
            }
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
            add_verdict(c, find_comparison(t, a, b, m, false));
            if (auto bs = t.contrast_bootstrap.find({a, b, m}); bs != t.contrast_bootstrap.end()) {
                c["bootstrap"] = bootstrap_json(bs->second);
                add_verdict(c["bootstrap"], find_comparison(t, a, b, m, true));
            }
            contrasts.push_back(std::move(c));
        }
    auto family_json = [](const std::vector<ReportTables::Comparison>& fam) {
        Json out = Json::array();
        for (auto& c : fam)
            out.push_back({{"row", c.a}, {"minus", c.b}, {"metric", c.metric}, {"n", c.n}, {"mean", json_number(c.mean, 6)},
                           {"p", json_number(c.p, 6)}, {"p_holm", json_number(c.p_holm, 6)},
                           {"p_bound", std::isfinite(c.p_bound) ? json_number(c.p_bound, 6) : Json(nullptr)},
                           {"holds", holds(c)},
                           {"ci_low", json_number(c.ci_low, 6)}, {"ci_high", json_number(c.ci_high, 6)},
                           {"verdict", verdict_word(c)}});
        return out;
    };
    auto no_verdict_json = [](const std::vector<ReportTables::Comparison>& out_of_family) {
        Json out = Json::array();
        for (auto& c : out_of_family)
            out.push_back({{"row", c.a}, {"minus", c.b}, {"metric", c.metric}, {"n", c.n}, {"mean", json_number(c.mean, 6)},
                           {"ci_low", json_number(c.ci_low, 6)}, {"ci_high", json_number(c.ci_high, 6)},
                           {"verdict", nullptr}, {"no_verdict", c.no_verdict}});
        return out;
    };
    Json training = Json::array();
    for (auto& r : t.rows) {
        auto it = t.training.find(r);
        if (it == t.training.end() || it->second.updates.n == 0) continue;
        const auto& tr = it->second;
        auto ms = [&](const Stats& st) {
            const auto [mean, sd] = stats(st);
            return Json{{"mean", mean}, {"std", sd}};
        };
        Json by = Json::object(), stopped = Json::object();
        for (auto& [criterion, n] : tr.best_by) by[criterion] = n;
        for (auto& [reason, n] : tr.stop_reasons) stopped[reason] = n;
        training.push_back({{"row", r}, {"runs", tr.updates.n}, {"updates", ms(tr.updates)}, {"epochs", ms(tr.epochs)},
                            {"best_step", ms(tr.best_step)}, {"best_by", by}, {"hours", ms(tr.hours)}, {"stopped_by", stopped}});
    }
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
                {"family_bootstrap", family_json(t.family_bootstrap)},
                {"no_verdict_t", no_verdict_json(t.no_verdict_t)},
                {"no_verdict_bootstrap", no_verdict_json(t.no_verdict_bootstrap)},
                {"verdict_rule", {{"alpha", kVerdictAlpha}, {"min_seeds", kMinVerdictSeeds}, {"adjustment", "holm"},
                                  {"validation_split", t.valid_split}, {"stated_tests", t.stated_tests}}},
                {"training", training}};
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
