// The report's plots through gnuplot.
#include "experiments/report/plots.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "experiments/config/config.hpp"
#include "experiments/data/corpus.hpp"
#include "experiments/data/json.hpp"
#include "experiments/eval/significance.hpp"
#include "experiments/report/report.hpp"
#include "experiments/report/runs.hpp"
#include "experiments/tasks/metric_names.hpp"
#include "experiments/train/checkpoint.hpp"

namespace relpos {

namespace fs = std::filesystem;

namespace {

// A label as a file-name part: letters, digits, '-', '_' and '.' kept, anything else '_'.
std::string safe_name(const std::string& s) {
    std::string r;
    for (char c : s) r += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.') ? c : '_';
    return r;
}

// |t| exceeds the 5% two-sided critical value for n - 1 degrees of freedom.
// "k=16" for key model.position.k and label 16: a curve's name in the legend.
std::string named_label(const std::string& key, const std::string& label) {
    return key.substr(key.rfind('.') + 1) + "=" + label;
}

// One line of a plot's data file: x as given, then each value at ten significant digits (a rebuilt relpos -
// FMA contraction, another compiler - moves the 16th, and a regenerated report should not differ for that).
std::string dat_line(double x, std::initializer_list<double> values) {
    std::string line = fmt::format("{}", x);
    for (double v : values) line += fmt::format(" {:.10g}", v);
    return line + "\n";
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


}  // namespace

PlotInputs read_plot_inputs(const fs::path& dir, const ReportTables& t) {
    PlotInputs in;
    in.gnuplot = have_gnuplot();
    if (!in.gnuplot) return in;
    in.runs = read_runs(dir);
    for (auto& r : in.runs) {
        // a shared run under this experiment's name for it (the link in runs/), as the tables name it
        if (const std::string own = r.entry; t.run_labels.count(own)) r.id = own;
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
    // What an earlier report drew goes first (its data, scripts and images), so a row, a run or a plot that
    // is gone from the report is gone from plots/ too; any other file there is left alone.
    for (const auto& e : fs::directory_iterator(pdir)) {
        const auto ext = e.path().extension();
        if (e.is_regular_file() && (ext == ".dat" || ext == ".gp" || ext == ".png")) fs::remove(e.path());
    }
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
        std::map<std::string, metric_names::AtLength> bases;  // "test.accuracy", "test.ppl" -> split, metric
        for (const auto& m : t.metrics)
            if (auto a = metric_names::at_length(m)) bases.emplace(a->family, *a);
        static const char* colours[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b",
                                        "#e377c2", "#7f7f7f", "#bcbd22", "#17becf", "#000000", "#aec7e8",
                                        "#98df8a", "#ff9896", "#c5b0d5"};
        for (const auto& [base, parts] : bases) {
            const std::string& split = parts.split;
            const std::string& what = parts.metric;  // "accuracy"
            // n -> the metric drawn there: the base split's own, else another split's of the same metric
            std::map<double, std::string> points;
            double split_from = -1;
            for (const auto& [key, st] : t.length_cells) {
                const std::string& m = std::get<2>(key);
                const auto a = metric_names::at_length(m);
                if (!a || a->split.empty() || a->metric != what) continue;
                const double n = a->n;
                const bool own = a->family == base;
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
                        text += dat_line(x, {c->second.mean, c->second.mean - c->second.std, c->second.mean + c->second.std});
                    }
                    // report.compare's run of this row (e.g. trained at the longest window), dashed in its colour,
                    // at every length the reference measured (its own, not this experiment's: a reference may
                    // have been evaluated at lengths this study was not), the plotted split's own where both are
                    std::string compare;
                    if (col.empty() && !t.compare_title.empty()) {
                        std::map<double, std::pair<bool, double>> at_length;  // n -> (the plotted split's, mean)
                        for (const auto& [key, st] : t.compare_length_cells) {
                            const auto a = metric_names::at_length(key.second);
                            if (key.first != row || !st.n || !a || a->split.empty() || a->metric != what) continue;
                            const double n = a->n;
                            const bool own = a->family == base;
                            auto it = at_length.find(n);
                            if (it == at_length.end() || (own && !it->second.first)) at_length[n] = {own, st.mean};
                        }
                        for (const auto& [x, v] : at_length) compare += dat_line(x, {v.second});
                    }
                    if (text.empty() && compare.empty()) continue;  // a row with no finished run at this column
                    const char* colour = colours[i++ % (sizeof colours / sizeof *colours)];
                    if (!text.empty()) {
                        std::ofstream(d) << text;
                        plot += fmt::format("{}'{}' using 1:3:4 with filledcurves fc rgb '{}' fs transparent solid 0.12 notitle, "
                                            "'' using 1:2 with linespoints lc rgb '{}' lw 2 pt 7 ps 0.7 title '{}'",
                                            plot.empty() ? "" : ", ", d.string(), colour, colour, gq(row));
                    }
                    if (!compare.empty()) {
                        const fs::path cd = pdir / (stem + "." + safe_name(row) + ".compare.dat");
                        std::ofstream(cd) << compare;
                        plot += fmt::format("{}'{}' using 1:2 with linespoints dt 2 lc rgb '{}' lw 1.5 pt 6 ps 0.7 title '{}'",
                                            plot.empty() ? "" : ", ", cd.string(), colour, gq(row + " (" + t.compare_title + ")"));
                    }
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
                // loss_pos<N>@<p>: the x axis is the position in a window of N tokens, not a length; a dashed
                // line where the positions the model trained at end
                const std::size_t window = metric_names::loss_by_position_window(what);
                const bool by_position = window > 0;
                if (by_position) extra += fmt::format("set xrange [0:{}]\n", window);  // the window, not gnuplot's round-up
                if (by_position && t.train_context > 0 && double(t.train_context) < hi)
                    extra += fmt::format("set arrow from {0}, graph 0 to {0}, graph 1 nohead dt 2 lc rgb '#555555'\n"
                                         "set label 'past the training length ({0}) ->' at {0}, graph 0.97 offset 0.5, 0 font ',9'\n",
                                         t.train_context);
                const std::string title =
                    (by_position ? fmt::format("{}: loss by position in windows of {} tokens", split, window) : base) +
                    (col.empty() ? "" : " — " + col) +
                    (mixed ? fmt::format(" (lengths below {} from the other splits)", split_from) : "");
                const fs::path sfile = pdir / (stem + ".gp");
                std::ofstream(sfile) << fmt::format(
                    "set terminal pngcairo size 1000,720 noenhanced\nset output '{}'\nset title '{}'\nset xlabel "
                    "'{}{}'\nset ylabel '{}'\n{}{}{}set grid\nset key below font ',9' maxrows 5\nplot {}\n",
                    (pdir / (stem + ".png")).string(), gq(title),
                    by_position ? "position in the window (the context a token sees)" : "length", logx ? " (log scale)" : "",
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
            // the paired differences by position (ReportTables::position_paired): one line per pair, mean over
            // seeds with its 95% interval as a band, a line at 0; what a few hundredths of a nat between two
            // rows look like along the window, which the plot above cannot show at its scale
            const std::size_t window = metric_names::loss_by_position_window(what);
            if (window == 0 || t.position_paired.empty()) continue;
            const std::string stem = "metric_vs_length." + safe_name(base) + ".paired";
            std::string plot;
            std::size_t i = 0;
            for (const auto& [a, b] : t.position_pairs) {
                const auto found = t.position_paired.find({a, b, base});
                if (found == t.position_paired.end()) continue;  // a pair with no seed finished in both rows yet
                const std::map<double, Stats>& at = found->second;  // position -> paired difference
                std::string text;
                for (const auto& [x, d] : at) {
                    const double half = d.n > 1 ? t_critical_95(d.n - 1) * d.std / std::sqrt(double(d.n)) : 0;
                    text += dat_line(x, {d.mean, d.mean - half, d.mean + half});
                }
                const fs::path d = pdir / (stem + "." + std::to_string(i) + ".dat");
                std::ofstream(d) << text;
                const char* colour = colours[i++ % (sizeof colours / sizeof *colours)];
                plot += fmt::format("{}'{}' using 1:3:4 with filledcurves fc rgb '{}' fs transparent solid 0.15 notitle, "
                                    "'' using 1:2 with linespoints lc rgb '{}' lw 2 pt 7 ps 0.5 title '{}'",
                                    plot.empty() ? "" : ", ", d.string(), colour, colour,
                                    gq(a + " − " + b + " (n=" + std::to_string(at.begin()->second.n) + ")"));
            }
            if (plot.empty()) continue;
            std::string extra = fmt::format("set xrange [0:{}]\nset arrow from graph 0, first 0 to graph 1, first 0 nohead lc rgb '#555555'\n", window);
            if (t.train_context > 0 && double(t.train_context) < double(window))
                extra += fmt::format("set arrow from {0}, graph 0 to {0}, graph 1 nohead dt 2 lc rgb '#555555'\n"
                                     "set label 'past the training length ({0}) ->' at {0}, graph 0.97 offset 0.5, 0 font ',9'\n",
                                     t.train_context);
            const fs::path sfile = pdir / (stem + ".gp");
            std::ofstream(sfile) << fmt::format(
                "set terminal pngcairo size 1000,720 noenhanced\nset output '{}'\nset title '{}'\nset xlabel "
                "'position in the window (the context a token sees)'\nset ylabel '{}'\n{}set grid\n"
                "set key below font ',9' maxrows 5\nplot {}\n",
                (pdir / (stem + ".png")).string(),
                gq(fmt::format("{}: loss by position in windows of {} tokens, paired differences", split, window)),
                gq("difference of " + what + " (nats; mean over seeds, band = 95% interval)"), extra, plot);
            run_gnuplot(sfile);
            made.push_back((pdir / (stem + ".png")).string());
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


std::vector<std::string> render_plots(const std::string& dir, const ReportTables& t, std::string* note) {
    return draw_plots(dir, t, read_plot_inputs(dir, t), note);
}


}  // namespace relpos
