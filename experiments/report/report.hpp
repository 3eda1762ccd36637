// Result tables from finished runs (used by `relpos report` and its tests).
#pragma once

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
    // Multiplicity: the report's family of comparisons (every row against the baseline and every contrast,
    // for each metric of the report) under each test, with its p-value and the Holm-adjusted one over the
    // family: the paired t-test over seeds (comparisons with n >= 2 and a spread), and the paired
    // bootstrap over test sentences where the report has one.
    struct Comparison {
        std::string a, b, metric;  // a minus b
        std::size_t n = 0;         // seeds paired
        double mean = 0, p = 1, p_holm = 1;
    };
    std::vector<Comparison> family_t, family_bootstrap;
};

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
