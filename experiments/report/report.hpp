// Result tables from finished runs (used by `relpos report` and its tests).
#pragma once

#include <cmath>
#include <limits>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace relpos {

struct Stats {
    double mean = 0, std = 0;  // sample standard deviation (n - 1); 0 when n < 2
    std::size_t n = 0;
};
Stats stats_of(const std::vector<double>& v);

struct ReportTables {
    std::string title, description;
    std::string rows_key, cols_key;
    std::vector<std::string> rows, cols, metrics;  // cols == {""} without a column key
    std::map<std::tuple<std::string, std::string, std::string>, Stats> cells;  // (row, col, metric)
    // Each run's value, for tables without columns: (row, seed, metric); seeds in numeric order.
    std::vector<std::string> seeds;
    std::map<std::tuple<std::string, std::string, std::string>, double> per_seed;
    // Every <split>.<metric>@<n> the runs wrote (accuracy by input length, perplexity by window), whether
    // the report lists it or not: what the metric_vs_length plots draw.
    std::map<std::tuple<std::string, std::string, std::string>, Stats> length_cells;  // (row, col, metric)
    std::string reference_title;
    std::map<std::string, double> reference;  // row label -> published number
    std::size_t runs = 0;
    // the points of the experiment's sweep, and how many of them have finished (0, 0 when its experiment.yaml
    // no longer expands): a report of fewer says so at its top
    std::size_t sweep_points = 0, sweep_finished = 0;
    std::string commits, machines, latest;
    // (the machines that trained a run, in order, joined by ", then "; the ids of the runs they trained), only
    // when the runs differ in them
    std::vector<std::pair<std::string, std::vector<std::string>>> runs_by_machines;
    double train_seconds = 0;
    double train_cpu_seconds = 0;  // over the runs_with_cpu runs that record it
    std::size_t runs_with_cpu = 0;
    std::vector<std::string> plots;  // report.plots; empty = every plot that applies
    // data.lm.context, the length a language model trained at (the loss-by-position plot marks it); 0 when
    // the sweep varies it (no one length to mark)
    long train_context = 0;
    // report.baseline: for each (row, metric), row minus baseline over the seeds both have (paired by
    // seed: the same data order and initial draws, so seed-to-seed luck cancels)
    std::string baseline;
    std::map<std::pair<std::string, std::string>, Stats> paired;  // (row, metric)
    // Paired bootstrap over test sentences for BLEU metrics (row vs baseline, seeds paired).
    struct Bootstrap {
        double observed = 0, ci_low = 0, ci_high = 0, p_value = 1;
        std::size_t resamples = 0, seeds = 0;
    };
    std::map<std::pair<std::string, std::string>, Bootstrap> bootstrap;  // (row, metric)
    // report.contrasts: row a minus row b for pairs other than (row, baseline), the same two tests.
    std::vector<std::pair<std::string, std::string>> contrasts;  // (a, b) as the config names them
    std::map<std::tuple<std::string, std::string, std::string>, Stats> contrast_paired;  // (a, b, metric)
    std::map<std::tuple<std::string, std::string, std::string>, Bootstrap> contrast_bootstrap;
    // The same pairs (report.contrasts, or without any every row minus the baseline; in that order) at each
    // position of every loss-by-position metric the runs wrote, (a, b, <split>.loss_pos<N>@<p>): where along a
    // window two rows part. Paired by seed, so the difficulty of the tokens at a position, the same for every
    // row, cancels. Only without a column key. Keyed by (a, b, <split>.loss_pos<N>), then by position p.
    std::vector<std::pair<std::string, std::string>> position_pairs;
    std::map<std::tuple<std::string, std::string, std::string>, std::map<double, Stats>> position_paired;
    // BLEU by source-length bucket: (row, split, bucket label) over seeds; bucket labels in order.
    std::vector<std::string> bucket_splits, bucket_labels;
    std::map<std::tuple<std::string, std::string, std::string>, Stats> buckets;
    std::map<std::pair<std::string, std::string>, std::size_t> bucket_sentences;  // (split, bucket) -> sentences
    // How each row's runs trained: updates, epochs, best step (over seeds) and why they stopped.
    struct Training {
        Stats updates, epochs, best_step, hours;
        std::map<std::string, std::size_t> stop_reasons;
        // how the best checkpoint (best_step) was chosen, and how many of the row's runs chose it so:
        // "lowest validation loss", or for gated runs (train.stop.target_metric) "highest <metric>"
        std::map<std::string, std::size_t> best_by;
    };
    std::map<std::string, Training> training;  // row label
    // The labels each run is reported under (this experiment's sweep where it names the run).
    std::map<std::string, std::map<std::string, std::string>> run_labels;
    // report.compare: the other experiment's cells and paired differences by (row, metric), for the rows
    // whose labels both have, and every <split>.<metric>@<n> its runs measured (the metric-vs-length plot
    // draws them dashed beside this experiment's lines).
    std::string compare_title, compare_dir;
    std::map<std::pair<std::string, std::string>, Stats> compare_cells, compare_paired, compare_length_cells;
    // The competence gate (runs whose results.json has "competence"): what was asked, per (row, col) how many
    // runs reached it of how many, each (row, col, metric) over the competent runs, and its max over all runs.
    std::string competence_what;  // "" when no run has a record
    std::map<std::pair<std::string, std::string>, std::pair<std::size_t, std::size_t>> competent;
    std::map<std::tuple<std::string, std::string, std::string>, Stats> competent_cells;
    std::map<std::tuple<std::string, std::string, std::string>, double> max_cells;
    // Multiplicity: the report's families of comparisons (every row against the baseline and every contrast,
    // for each metric of the report) under each test, with its p-value and the Holm-adjusted one over the
    // family: the paired t-test over seeds, and the paired bootstrap over test sentences where the report
    // has one. A comparison is a member of a family, and so carries a verdict ("holds": Holm-adjusted
    // p < 0.05; "not shown": >= 0.05), only when it is on a test split, pairs at least kMinVerdictSeeds seeds
    // and (for the t-test) has a spread; every other comparison is descriptive (its difference and
    // interval, no verdict, not counted in Holm's m), with the reason in no_verdict.
    struct Comparison {
        std::string a, b, metric;  // a minus b
        std::size_t n = 0;         // seeds paired
        double mean = 0, p = 1, p_holm = 1;
        // the unadjusted 95% interval of the difference (the t interval, or the bootstrap's percentiles);
        // NaN when there is none (one seed)
        double ci_low = 0, ci_high = 0;
        std::string no_verdict;  // "" for a member of the family; else kNoVerdictValidation, ...
        // While the study trains (sweep_finished < sweep_points) and fewer comparisons are tested than its config
        // states (stated_tests): min(1, stated_tests x p), the most its Holm p over the stated family can be
        // (Holm's adjusted p is at most m times the unadjusted one); NaN otherwise.
        double p_bound = std::numeric_limits<double>::quiet_NaN();
    };
    std::vector<Comparison> family_t, family_bootstrap;        // the members, in the report's order
    std::vector<Comparison> no_verdict_t, no_verdict_bootstrap; // the others (p and p_holm unset)
    // The comparisons the config states on test splits (every row against the baseline, every contrast, on each
    // test metric of the report), tested or not yet.
    std::size_t stated_tests = 0;
    std::string valid_split;  // data.valid_split: its metrics are never in a family
};

// The verdict rule's constants: a comparison needs this many paired seeds to carry a verdict, and the
// reasons a comparison carries none.
inline constexpr std::size_t kMinVerdictSeeds = 3;
inline constexpr const char* kNoVerdictValidation = "validation split";
inline constexpr const char* kNoVerdictTooFewSeeds = "too few seeds";
inline constexpr const char* kNoVerdictNoSpread = "no spread";
inline constexpr double kVerdictAlpha = 0.05;
inline constexpr const char* kWaitsForTheFamily = "waits for the family";
// The verdict of a member of a family: "holds" or "not shown" by its Holm-adjusted p; while its study trains with
// comparisons still untested (a finite p_bound), "holds" when the bound on its Holm p over the stated family is
// below the level, "not shown" when its unadjusted p is not (whatever the comparisons still to come show), and
// kWaitsForTheFamily in between.
inline const char* verdict_word(const ReportTables::Comparison& c) {
    if (std::isfinite(c.p_bound))
        return c.p_bound < kVerdictAlpha ? "holds" : c.p >= kVerdictAlpha ? "not shown" : kWaitsForTheFamily;
    return c.p_holm < kVerdictAlpha ? "holds" : "not shown";
}
inline bool holds(const ReportTables::Comparison& c) { return std::string(verdict_word(c)) == "holds"; }
// Whether a family is read against the stated family while its study trains (its members carry p_bound).
inline bool reads_interim(const std::vector<ReportTables::Comparison>& fam) {
    return !fam.empty() && std::isfinite(fam.front().p_bound);
}
// A metric of the validation split (val.bleu_tok, valid_loss, <data.valid_split>.accuracy): it chose the
// stopping point and the checkpoint, so it is shown but never tested.
bool is_validation_metric(const std::string& metric, const std::string& valid_split);
// The comparison a minus b on metric in the report's t (or bootstrap) family or among those without a
// verdict; nullptr when the report has none.
const ReportTables::Comparison* find_comparison(const ReportTables& t, const std::string& a, const std::string& b,
                                                const std::string& metric, bool bootstrap);

ReportTables build_report(const std::string& dir);

// A run's learning curve from its metrics.jsonl: the validation loss (and greedy validation BLEU, with
// train.valid_bleu) at each validation step, and the mean training loss over the updates since the
// previous validation. A missing file is an empty curve; a malformed line is a CheckpointError naming
// the file and line.
struct LearningCurve {
    std::map<long, double> valid, train, bleu;
};
LearningCurve read_learning_curve(const std::string& metrics_path);
std::string render_markdown(const ReportTables& t);
std::string render_csv(const ReportTables& t);
std::string render_json(const ReportTables& t);
// PNG plots through gnuplot; returns the files made, or sets *note when gnuplot is missing.
std::vector<std::string> render_plots(const std::string& dir, const ReportTables& t, std::string* note);

// `relpos report DIR`: reads every finished run, writes report.md, report.csv and report.json (each
// complete or not at all) and the plots, and prints the Markdown table.
int cmd_report(const std::string& dir);

}  // namespace relpos
