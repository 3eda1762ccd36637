// relpos: the command line. run / report / eval / translate / normalize / list.
// Exit codes: 0 success, 1 internal error, out of memory or a failed file system operation (disk full),
// 2 bad input (config, data, checkpoint, usage), 3 training stopped on a non-finite loss or gradient,
// 130 interrupted (checkpoint written). Every error is one line on stderr starting with "error: "
// (or "internal error: " for a bug). docs/reliability.md lists them.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <ctime>
#include <cstdio>
#include <filesystem>
#include <new>
#include <iostream>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "autodiff/blas.hpp"
#include "experiments/train/checkpoint.hpp"
#include "experiments/train/distributed.hpp"
#include "experiments/cli/commands.hpp"
#include "experiments/config/config.hpp"
#include "experiments/data/corpus.hpp"
#include "experiments/report/report.hpp"
#include "experiments/run/experiment.hpp"
#include "experiments/run/sweep.hpp"
#include "experiments/train/trainer.hpp"
#include "nn/options.hpp"
#include "nn/printable.hpp"

using namespace relpos;

namespace {
// Messages end up on one visible stderr line whatever a library or the user's text put in them: line
// breaks become spaces, other control bytes and stray (non-UTF-8) bytes are shown escaped (\x01).
std::string one_line(std::string s) {
    for (char& c : s)
        if (c == '\n' || c == '\r') c = ' ';
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return nn::printable(s);
}

// Reports an error and returns its exit code. In a data-parallel job (docs/distributed.md) it ends every
// rank instead: the others would otherwise wait for this one forever at their next collective.
int fail(int code, const char* kind, const std::string& what) {
    fmt::print(stderr, "{}: {}{}\n", kind, rank_prefix(), one_line(what));
    std::fflush(stderr);
    if (world().size() > 1) world().abort(code);
    return code;
}
}  // namespace

int main(int argc, char** argv) {
    blas::tune_process(argv);
    blas::set_num_threads(1);  // OpenBLAS never threads on its own (its split rounds differently); commands set the pool
    CLI::App app{"relpos: position encodings in Transformers, Shaw et al. (2018) reproduced on a CPU.\n"
                 "Docs: README.md, docs/configs.md"};
    app.require_subcommand(1);

    // ---- run
    auto* run = app.add_subcommand("run", "Train and evaluate every point of an experiment config (resumes; skips finished runs)");
    std::string run_config;
    std::vector<std::string> run_overrides;
    std::size_t jobs = 0;  // 0: as many 1-thread runs as `threads` allows (measured fastest; docs/performance.md)
    std::string shard;
    bool quiet = false;
    run->add_option("config", run_config, "experiment YAML file, e.g. configs/quickstart.yaml")->required();
    run->add_option("overrides", run_overrides, "key=value overrides, e.g. train.epochs=2 model.position.k=4");
    run->add_option("--jobs,-j", jobs,
                    "sweep points to run side by side (threads are split between them); default: one 1-thread run "
                    "per thread of the config (e.g. 2 x 1 for threads: 2), or one run with all threads when there is one point")
        ->check(CLI::Range(std::size_t(1), std::size_t(4096)));
    run->add_option("--shard", shard, "run only points i, i+n, i+2n, ... (0-based i/n; e.g. a Slurm array task)");
    std::string only;
    auto* only_opt = run->add_option("--only", only,
                    "run only the points whose run id matches this shell pattern, e.g. 'position=type-alibi_seed=*' or "
                    "one run's id (--list shows the ids); the ids and run names stay the whole sweep's");
    run->footer("Data-parallel: mpirun -np N relpos run CONFIG trains each run on N processes with a relpos built with "
                "cmake -DRELPOS_MPI=ON (make mpi; docs/distributed.md). --shard splits a sweep between such jobs.");
    run->add_flag("--quiet,-q", quiet, "no live progress line");
    std::string start_before;
    run->add_option("--start-before", start_before,
                    "start no new run after this time, and let the running ones finish: +90m, +2h, +45s from now, or "
                    "@<unix time> (e.g. @$(date -d 14:00 +%s)); the runs left over start when the command is run again");
    std::string finish_before;
    run->add_option("--finish-before", finish_before,
                    "start a new run only while it can finish before this time (same forms as --start-before): the "
                    "expected length is the most updates a finished run of the sweep took, at the pace of the latest one, + 10% "
                    "+ 5 minutes, so a "
                    "machine held until a known time trains to the end without starting a run it would lose");
    bool list_points = false;
    run->add_flag("--list", list_points, "list the sweep points (run ids, overrides, which have finished, which are training or were interrupted and at which step, which will continue a capped run of the store and from which update) and how many core-hours of training are left, without running anything");

    // ---- report
    auto* report = app.add_subcommand("report", "Render tables (Markdown, CSV, JSON) and plots from finished runs");
    std::string report_dir;
    report->add_option("dir", report_dir, "an experiment's results directory, e.g. results/quickstart")->required();

    // ---- eval
    auto* eval = app.add_subcommand(
        "eval", "Score a run's best checkpoint on parallel files (--src, --ref), or on splits of its own task "
                "(--split, with evaluation settings as overrides: one JSON line per split on stdout, e.g. "
                "relpos eval --run DIR --split test data.synthetic.test_len=[41,500]); --config CONFIG --out DIR "
                "does --split over every finished run of an experiment, one JSON file per run.\n"
                "A run trained on lowercased Moses-tokenized text (a task that reads tokenized files, with "
                "data.tokenized: true, its default) prints its two results.json metrics: bleu_tok (whitespace BLEU "
                "of the output against the references lowercased and tokenized like the training text; the figure "
                "of the tables) and bleu (sacreBLEU 13a, case-insensitive, of the output with Moses escapes and "
                "splits undone against the raw references). "
                "Other runs print sacreBLEU 13a and whitespace BLEU of the output against the references as given.");
    EvalArgs ea;
    eval->add_option("--run", ea.run_dir, "run directory, e.g. results/quickstart/runs/type=shaw_seed=1");
    eval->add_option("--config", ea.config,
                     "instead of --run: every finished run of an experiment config (as `relpos run CONFIG` named it, "
                     "results_dir/name/runs/<id>) scored with --split and the overrides, one file per run, "
                     "--out DIR/<id>.json (its JSON lines, with the run id); an existing file is kept, so it "
                     "resumes; runs not finished or without a best checkpoint on this machine are listed and skipped");
    auto* runs_opt = eval->add_option("--runs", ea.runs_glob, "with --config: only the runs whose id matches this glob, e.g. "
                     "'position=type-rope_seed=*'");
    eval->add_option("--src", ea.src, "source file (plain or .gz), one sentence per line");
    eval->add_option("--ref", ea.ref, "reference file, line-aligned with --src");
    eval->add_option("--split", ea.splits,
                     "a split of the run's task to score as its final evaluation does (repeatable: --split val --split "
                     "test); the run's config with the overrides that follow, which may change only evaluation: "
                     "eval.*, data.test_splits, data.synthetic.test_len, data.synthetic.test_size, data.lm.eval_lengths, "
                     "data.lm.stride, data.lm.max_eval_tokens, the options the run's encoding declares evaluation-only "
                     "(`relpos list` marks them: randomized_eval, RoPE's scaling and scaling_length), and seed (the "
                     "evaluation's position draws). Models are built as trained (learned tables keep their size)")
        ->expected(1)  // one split per --split, so that the overrides after it are not taken for splits
        ->allow_extra_args(false)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    eval->add_option("overrides", ea.overrides, "with --split: key=value evaluation settings, e.g. "
                     "data.synthetic.test_len=[41,500] eval.batch_tokens=4096");
    eval->add_option("--out", ea.out, "write the hypotheses here (with --config: the directory of one JSON file per run)");
    eval->add_option("--beam", ea.beam, "beam size, 1 to 64 (default: the run's eval.beam)")
        ->check(CLI::Range(std::size_t(1), std::size_t(64)));
    const std::string input_help =
        "raw (default): sentences as written; for a run trained on tokenized text they are lowercased and "
        "tokenized like its training text first (relpos normalize shows the result; the task's data README says "
        "how close that is). tokenized: already lowercased and Moses-tokenized like the training text, read as it "
        "is. Runs on raw text ignore it";
    eval->add_option("--input", ea.input, input_help + "; applies to --src and --ref")->default_str("raw");

    // ---- translate
    auto* tr = app.add_subcommand(
        "translate", "Translate stdin to stdout with a run's best checkpoint, one sentence per line. The output is "
                     "in the form of the run's training text (for tokenized text: lowercased, tokenized, with Moses "
                     "escapes such as &apos;).");
    TranslateArgs ta;
    tr->add_option("--run", ta.run_dir, "run directory")->required();
    tr->add_option("--beam", ta.beam, "beam size, 1 to 64 (default: the run's eval.beam)")
        ->check(CLI::Range(std::size_t(1), std::size_t(64)));
    tr->add_option("--input", ta.input, input_help)->default_str("raw");

    // ---- normalize
    auto* norm = app.add_subcommand(
        "normalize", "Lowercase and tokenize stdin like the tokenized training text of a task, one line out per "
                     "line in (what translate and eval --input raw do to their text)");
    std::string norm_lang, norm_task;
    norm->add_option("--lang", norm_lang, "the language of the text, one the task knows (e.g. de or en)")->required();
    norm->add_option("--task", norm_task,
                     "the task whose training text to match (default: the first registered task that reads "
                     "tokenized text; relpos list shows the tasks)");

    // ---- list
    auto* list = app.add_subcommand("list", "Registered position encodings and synthetic tasks, with their options");
    bool list_keys = false;
    list->add_flag("--keys", list_keys,
                   "instead: every config key with its type, default and allowed values, as the config reader "
                   "declares them (docs/configs.md explains each)");

    if (argc > 1 && argv[1][0] != '-') {  // CLI11 would only say that a subcommand is required
        const std::string cmd = argv[1];
        std::vector<std::string> names;
        for (const auto* s : app.get_subcommands({})) names.push_back(s->get_name());
        if (std::find(names.begin(), names.end(), cmd) == names.end()) {
            fmt::print(stderr, "error: '{}' is not a relpos command; the commands are {} (relpos --help shows them)\n",
                       one_line(cmd), fmt::join(names, ", "));
            return 2;
        }
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::Success& e) {  // --help
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        // A usage mistake is one line like every other bad input (CLI11 would add a second one).
        std::string sub;
        for (const auto* s : app.get_subcommands()) sub = " " + s->get_name();
        fmt::print(stderr, "error: {} (relpos{} --help shows the usage)\n", one_line(e.what()), sub);
        return 2;
    }
    std::optional<DistributedSession> mpi;  // lives until main returns: MPI_Finalize after the last collective
    try {
        if (*run) {
            mpi.emplace();
            RunOptions ro;
            ro.jobs = jobs;
            ro.quiet = quiet;
            ro.list_only = list_points;
            if (!shard.empty()) ro.shard = parse_shard(shard);
            if (only_opt->count() && only.empty())
                throw ConfigError("relpos run: --only is empty (an unset shell variable?); give a run-id pattern such as "
                                  "'seed=1', or leave --only out to run every point");
            ro.only = only;
            if (!start_before.empty())
                ro.start_before = parse_start_before(start_before, static_cast<std::int64_t>(std::time(nullptr)));
            if (!finish_before.empty())
                ro.finish_before = parse_start_before(finish_before, static_cast<std::int64_t>(std::time(nullptr)),
                                                      "--finish-before");
            return run_experiment(run_config, run_overrides, ro);
        }
        if (*report) return cmd_report(report_dir);
        if (*eval) {
            if (runs_opt->count() && ea.runs_glob.empty())
                throw ConfigError("relpos eval: --runs is empty (an unset shell variable?); give a run-id glob such as "
                                  "'seed=1', or leave --runs out to score every finished run");
            return cmd_eval(ea);
        }
        if (*tr) return cmd_translate(ta);
        if (*norm) return cmd_normalize(norm_lang, norm_task);
        if (*list) return list_keys ? cmd_list_keys() : cmd_list();
    } catch (const ConfigError& e) {
        return fail(2, "error", e.what());
    } catch (const nn::OptionError& e) {
        return fail(2, "error", e.what());
    } catch (const DataError& e) {
        return fail(2, "error", e.what());
    } catch (const CheckpointError& e) {
        return fail(2, "error", e.what());
    } catch (const WriteError& e) {  // the disk, not the input
        return fail(1, "error", std::string("cannot write files: ") + e.what());
    } catch (const std::bad_alloc&) {
        return fail(1, "error", "out of memory (a smaller model, train.batch_tokens or eval.batch_tokens, or fewer or shorter examples (data.synthetic sizes and lengths, data.lm.eval_lengths) need less)");
    } catch (const std::filesystem::filesystem_error& e) {
        // The disk, not the input: full, read-only, or changed under the run.
        return fail(1, "error", std::string("cannot read or write files: ") + e.what());
    } catch (const std::exception& e) {
        return fail(1, "internal error", e.what());
    }
    return 0;
}
