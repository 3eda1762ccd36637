#include "experiments/cli/commands.hpp"
#include "experiments/eval/decode.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <fmt/format.h>

#include "autodiff/blas.hpp"
#include "experiments/eval/bleu.hpp"
#include "experiments/train/checkpoint.hpp"
#include "experiments/data/corpus.hpp"
#include "experiments/data/json.hpp"
#include "experiments/util/text.hpp"
#include "experiments/eval/scoring.hpp"
#include "experiments/run/provenance.hpp"
#include "experiments/run/store.hpp"
#include "experiments/run/sweep.hpp"
#include "experiments/util/files.hpp"
#include "experiments/util/system.hpp"
#include "experiments/tasks/seq2seq.hpp"
#include "experiments/tasks/sequence_limits.hpp"
#include "experiments/train/model.hpp"
#include "nn/position.hpp"
#include "nn/printable.hpp"

namespace relpos {

namespace fs = std::filesystem;

namespace {

// A finished (or at least trained) run: its config, tokenizer and best weights.
struct LoadedRun {
    ExperimentConfig cfg;
    Dataset data;  // only the tokenizer / vocabulary part
    std::unique_ptr<nn::Transformer<float>> model;
};

// A run directory's config.yaml, with `overrides` applied; refuses what is not a run directory.
ExperimentConfig load_run_config(const std::string& run_dir, const std::vector<std::string>& overrides,
                                 bool check_paths) {
    const fs::path dir(run_dir);
    std::error_code ec;
    if (!fs::is_directory(dir, ec))
        throw ConfigError(fmt::format("--run {}: {}", run_dir,
                                      fs::exists(dir, ec) ? "is a file, not a run directory" : "no such directory"));
    if (!fs::exists(dir / "config.yaml"))
        throw ConfigError(fmt::format("--run {}: not a run directory (no config.yaml)", run_dir));
    LoadFlags flags;
    flags.check_paths = check_paths;
    return load_config((dir / "config.yaml").string(), overrides, flags);
}

void load_best_weights(const std::string& run_dir, nn::Transformer<float>& model);

// The threads a run's final evaluation used, and OpenBLAS single-threaded (blas::set_num_threads), so that
// eval and translate give its numbers: results.json's "threads" (under `--jobs N` a run gets its config's
// threads / N, and config.yaml keeps the config's), else config.yaml's. OpenBLAS's own threads (its default:
// one per core) split some products differently and round differently (seen with its Haswell kernels: ppl
// 107.4051 -> 107.405).
int use_run_threads(const std::string& run_dir, const ExperimentConfig& cfg) {
    const fs::path results = fs::path(run_dir) / "results.json";
    std::error_code ec;
    const int recorded = fs::exists(results, ec) ? read_finished_run(results).threads : -1;  // -1: not recorded
    const int n = std::max<int>(1, recorded > 0 ? recorded : static_cast<int>(cfg.threads));
    blas::set_num_threads(n);
    return n;
}

LoadedRun load_run(const std::string& run_dir) {
    const fs::path dir(run_dir);
    LoadedRun r;
    r.cfg = load_run_config(run_dir, {}, false);
    use_run_threads(run_dir, r.cfg);
    if (r.cfg.model.family != "encoder_decoder")
        throw ConfigError(fmt::format("--run {}: a {} model (task {}); relpos eval and translate decode encoder-decoder "
                                      "runs, and a decoder-only run's figures are in its results.json",
                                      run_dir, r.cfg.model.family, r.cfg.data.task));
    const TaskEntry* task = task_entry(r.cfg);
    if (task && task->id_vocab) {  // symbol ids, no subword model
        r.data.synthetic = true;
        r.data.vocab = task->id_vocab(r.cfg);
    } else {
        const fs::path sp = dir / "subword.model";
        if (!fs::exists(sp)) throw ConfigError(fmt::format("--run {}: the run has no subword.model", run_dir));
        r.data.subword = std::make_shared<Subword>(Subword::load(sp.string()));
        r.data.vocab = r.data.subword->vocab_size();
    }
    r.model = build_model(r.cfg, r.data.vocab);
    load_best_weights(run_dir, *r.model);
    return r;
}

// The run's best checkpoint into `model` (built for the run's config), in eval mode; a missing or damaged
// checkpoint is one sentence that says what to do.
void load_best_weights(const std::string& run_dir, nn::Transformer<float>& model) {
    const fs::path dir(run_dir);
    const fs::path best = dir / "checkpoints" / "best";
    if (!checkpoint_exists(best.string())) {
        std::error_code ec;
        if (fs::is_directory(best, ec))  // saved once, then damaged: not the same as never trained
            throw CheckpointError(fmt::format("--run {}: checkpoint {} is incomplete (no state.json); train the run "
                                              "again (move the run directory away first) or restore the file",
                                              run_dir, best.string()));
        // Something is there, but not a checkpoint directory: training would not replace it, so "train the
        // run first" would be the wrong advice. Say what is in the way.
        for (const fs::path& p : {dir / "checkpoints", best}) {
            const fs::file_status st = fs::symlink_status(p, ec);
            if (!fs::exists(st) || fs::is_directory(p, ec)) continue;
            const std::string what = fs::is_symlink(st) && !fs::exists(p, ec) ? "a symbolic link that leads nowhere"
                                     : fs::is_regular_file(p, ec)               ? "a file"
                                                                                : "not a directory";
            throw CheckpointError(fmt::format("--run {}: {} is {}, where a run keeps its {}; move it away and restore "
                                              "the run's checkpoints, or train the run again (move the run directory "
                                              "away first)",
                                              run_dir, p.string(), what,
                                              p == best ? "best checkpoint (a directory with state.json)"
                                                        : "checkpoints (a directory with best/ and last/)"));
        }
        throw CheckpointError(fmt::format("--run {}: no best checkpoint yet (train the run first)", run_dir));
    }
    load_checkpoint(best.string(), model.named_parameters(), nullptr);
    model.eval();
}

// stdin is UTF-8 text, as the files eval reads are: a Latin-1 or binary line is refused, not translated.
void check_stdin_line(const std::string& line, std::size_t lineno) {
    if (!is_valid_utf8(line))
        throw DataError(fmt::format("stdin line {} is not valid UTF-8 (relpos reads UTF-8 text; convert it first, e.g. "
                                    "iconv -f latin1 -t utf-8)",
                                    lineno));
    // A CR before the end of a line: the input's lines end in CR alone (all of them, or some: mixed endings), so
    // what reads as one line holds several; named here rather than as its symptom (a sentence too long).
    if (const auto cr = line.find('\r'); cr != std::string::npos && cr + 1 < line.size())
        throw DataError(fmt::format("stdin line {} holds a carriage return (CR) before its end: the input has "
                                    "carriage-return-only or mixed line endings; give every line an LF ending (CR-only "
                                    "text: tr '\\r' '\\n')",
                                    lineno));
}

std::vector<std::int32_t> encode_source(const LoadedRun& r, const std::string& line, std::size_t lineno) {
    auto check_length = [&](std::size_t n) {
        if (n > kMaxDecodeSourceTokens)
            throw DataError(fmt::format("input line {} has {} tokens; eval and translate take sentences of up to {} "
                                        "tokens (split longer text into sentences)",
                                        lineno, n, kMaxDecodeSourceTokens));
    };
    if (r.data.subword) {
        auto ids = r.data.subword->encode(line);
        check_length(ids.size());
        return ids;
    }
    // synthetic tasks: whitespace-separated ids
    std::vector<std::int32_t> ids;
    std::istringstream ss(line);
    std::string tok;
    while (ss >> tok) {
        char* end = nullptr;
        long v = std::strtol(tok.c_str(), &end, 10);
        if (*end || v < FIRST_FREE_ID || static_cast<std::size_t>(v) >= r.data.vocab)
            throw DataError(fmt::format("input line {}: '{}' is not a symbol id in [{}, {})", lineno, nn::printable(tok), FIRST_FREE_ID,
                                        r.data.vocab));
        ids.push_back(static_cast<std::int32_t>(v));
        check_length(ids.size());
    }
    return ids;
}

// --out is checked before the (slow) decoding: its directory must exist, and it must not overwrite a
// file of a finished run (a run directory with results.json is never touched).
void check_out_path(const std::string& out) {
    if (out.empty()) return;
    std::error_code ec;
    const fs::path p(out);
    const fs::path parent = p.parent_path().empty() ? fs::path(".") : p.parent_path();
    if (fs::is_directory(p, ec)) throw DataError(fmt::format("--out {} is a directory; give a file name", out));
    if (!fs::is_directory(parent, ec))
        throw DataError(fmt::format("--out {}: directory {} does not exist", out, parent.string()));
    if (fs::exists(parent / "results.json", ec))
        throw DataError(fmt::format("--out {} is inside the finished run {}, whose files are never overwritten; "
                                    "write the hypotheses elsewhere", out, parent.string()));
}

// Whether a line looks normalized already by the run's task (false for a task without a normalizer).
bool looks_tokenized(const ExperimentConfig& cfg, const std::string& line) {
    const TaskEntry* task = task_entry(cfg);
    return task && task->tokenized_text.looks_normalized && task->tokenized_text.looks_normalized(line);
}

// Normalizing text that is tokenized already would tokenize it again ("&apos;s" -> "&amp; apos ; s").
// (Of the bundled tokenized files about 95% of the lines look tokenized, 1 in 2,000 raw lines does.)
void warn_if_tokenized(const ExperimentConfig& cfg, const std::vector<std::string>& lines, const std::string& flag,
                       const std::string& path) {
    const auto n = static_cast<std::size_t>(
        std::count_if(lines.begin(), lines.end(), [&](const std::string& l) { return looks_tokenized(cfg, l); }));
    if (2 * n > lines.size())
        fmt::print(stderr, "warning: {} of {} lines of {} {} look tokenized already (Moses escapes such as &apos;, or "
                           "a space before the final period), and --input raw normalizes them again, which garbles "
                           "quotes and apostrophes; pass --input tokenized if the file is tokenized\n",
                   n, lines.size(), flag, path);
}

}  // namespace

InputForm parse_input_form(const std::string& value) {
    if (value == "raw") return InputForm::Raw;
    if (value == "tokenized") return InputForm::Tokenized;
    throw ConfigError(fmt::format("--input '{}' is not a form of text; use raw (sentences as written, normalized like "
                                  "the run's training text) or tokenized (already lowercased and tokenized, read as "
                                  "it is)", value));
}

std::string model_text(const ExperimentConfig& cfg, const std::string& line, const std::string& lang, InputForm form) {
    if (!reads_tokenized_text(cfg) || form != InputForm::Raw) return line;
    return task_entry(cfg)->tokenized_text.normalize(line, lang);
}

namespace {

// A directory of this process, removed with everything in it when the scope ends (errors ignored).
struct ScratchDir {
    fs::path path;
    ~ScratchDir() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
};

// The bytes of a file ("" when it cannot be read).
std::string file_bytes(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// What `relpos eval --split` may change: how a trained model is evaluated, never what was trained.
bool changes_only_evaluation(const std::string& key, const ExperimentConfig& trained) {
    static const std::vector<std::string> exact{"seed", "data.test_splits", "data.synthetic.test_len",
                                                "data.synthetic.test_size", "data.lm.eval_lengths", "data.lm.stride",
                                                "data.lm.max_eval_tokens"};
    if (key.rfind("eval.", 0) == 0 || key == "eval") return true;
    if (std::find(exact.begin(), exact.end(), key) != exact.end()) return true;
    // an option the run's encoding declares evaluation-only (nn::Options::evaluation_only: randomized_eval,
    // rope's scaling, ...): model.position.OPTION, model.position[i].OPTION
    const auto dot = key.rfind('.');
    if (key.rfind("model.position", 0) != 0 || dot == std::string::npos || dot < 14) return false;
    const std::string where = key.substr(0, dot), option = key.substr(dot + 1);
    for (const auto& spec : trained.model.position) {
        if (spec.key != where) continue;
        auto docs = nn::describe_position_options(spec.type);
        for (const auto& d : nn::describe_common_position_options()) docs.push_back(d);
        return std::any_of(docs.begin(), docs.end(),
                           [&](const nn::OptionDoc& d) { return d.key == option && d.evaluation_only; });
    }
    return false;
}

// A run's config as trained, and with the overrides `relpos eval --split` applies (checked against the
// trained one: which options are evaluation-only depends on its encoding) and the splits asked for.
struct EvalConfigs {
    ExperimentConfig trained, evaluated;
};
EvalConfigs eval_configs(const std::string& run_dir, const std::vector<std::string>& splits,
                         const std::vector<std::string>& overrides) {
    ExperimentConfig trained = load_run_config(run_dir, {}, true);
    for (const auto& o : overrides) {
        const Assignment as = parse_override(o);
        if (!changes_only_evaluation(as.key, trained))
            throw ConfigError(fmt::format(
                "{}: relpos eval changes only how the trained model is evaluated: eval.*, data.test_splits, "
                "data.synthetic.test_len, data.synthetic.test_size, data.lm.eval_lengths, data.lm.stride, "
                "data.lm.max_eval_tokens, the options the run's encoding declares evaluation-only (`relpos list`: "
                "randomized_eval, rope's scaling and scaling_length), and seed (the evaluation's draws); '{}' is "
                "not one of them (run {})", as.location, as.key, run_dir));
    }
    // The run's report section names metrics of its own evaluation; an evaluation that computes fewer
    // (eval.metrics=[ppl]) or other lengths has no report, so its cross-checks are left out.
    std::vector<std::string> with = overrides;
    with.insert(with.begin(), "report.metrics=[]");
    ExperimentConfig cfg = load_run_config(run_dir, with, true);
    std::vector<std::string> have{cfg.data.valid_split};  // the validation split, the test splits, train
    have.insert(have.end(), cfg.data.test_splits.begin(), cfg.data.test_splits.end());
    have.push_back("train");
    for (const auto& split : splits)
        if (std::find(have.begin(), have.end(), split) == have.end())
            throw ConfigError(fmt::format("--split {}: not a split of the run's data ({}); data.test_splits=[...] "
                                          "names the test splits", split, join(have)));
    cfg.eval.splits = splits;
    return {std::move(trained), std::move(cfg)};
}

// relpos eval --run DIR --split S [overrides]: the run's best checkpoint scored on splits of its own task,
// as the run's final evaluation scores them, optionally under other evaluation settings: one JSON object per
// split, with the run, the overrides and the provenance (commit, machine, threads, time, checkpoint step).
// subword_cache: where the retrained SentencePiece models are kept (keyed by corpus and options, so runs of one
// experiment share one); empty: a scratch directory of this call.
std::vector<Json> eval_splits(const std::string& run_dir, const std::vector<std::string>& splits,
                              const std::vector<std::string>& overrides, const std::string& subword_cache = {}) {
    // The model is built as it was trained: from the run's own config and data (a learned position table's
    // size follows the longest sequence of the run's splits); the splits scored come from the overridden one.
    auto [trained, cfg] = eval_configs(run_dir, splits, overrides);
    check_memory_up_front(cfg, overrides);  // before its data are generated (an overridden test_len, test_size)
    const int threads = use_run_threads(run_dir, cfg);
    {  // another machine or OpenBLAS kernel family rounds differently: say so before the numbers differ
        const RunRecord rec = read_finished_run(fs::path(run_dir) / "results.json");
        if (!rec.machine.empty() && rec.machine != machine_description())
            fmt::print(stderr,
                       "note: {} was evaluated on \"{}\", this evaluation runs on \"{}\": other kernels round "
                       "differently, so its own settings may differ from results.json in the last digits "
                       "(docs/reliability.md)\n",
                       run_dir, rec.machine, machine_description());
    }
    const ScratchDir scratch_dir{fs::temp_directory_path() / fmt::format("relpos-eval-{}", ::getpid())};
    const fs::path& scratch = scratch_dir.path;
    fs::create_directories(scratch);
    const Log log = [](const std::string& s) { fmt::print(stderr, "{}\n", s); };
    const std::string cache = subword_cache.empty() ? (scratch / "subword").string() : subword_cache;
    const Dataset as_trained = load_dataset(trained, cache, log);
    const Dataset data = load_dataset(cfg, cache, log);
    check_randomized_ranges(cfg, data);  // the overridden test lengths, when the encoding draws at evaluation
    // A subword task retrains its SentencePiece model from the run's data (deterministic): the ids the
    // checkpoint was trained on only if that model is the run's own, byte for byte.
    const fs::path own_subword = fs::path(run_dir) / "subword.model";
    if (fs::exists(own_subword) &&
        (!data.subword || file_bytes(own_subword) != file_bytes(data.subword->model_path())))
        throw ConfigError(fmt::format("--run {}: the subword model retrained from the run's data differs from the run's "
                                      "own {} (another corpus or SentencePiece version?): its ids would not be the "
                                      "checkpoint's; score it on parallel files with --src and --ref", run_dir,
                                      own_subword.string()));
    // The overridden config builds it (its randomized_eval and seed, which seeds the evaluation's position
    // draws), at the trained data's sizes; the weights are the checkpoint's.
    auto model = build_model(cfg, as_trained.vocab, as_trained.longest_source, as_trained.longest_target);
    load_best_weights(run_dir, *model);
    const auto task = make_task(cfg);
    // provenance, as results.json has it: the code, the machine (its OpenBLAS kernels: they round differently)
    Json base = {{"run", run_dir}, {"overrides", overrides}, {"threads", threads}, {"commit", source_commit()},
                 {"machine", machine_description()}, {"evaluated", now_iso()}};
    base["checkpoint_step"] = verify_checkpoint((fs::path(run_dir) / "checkpoints" / "best").string(), {}, false).step;
    std::vector<Json> lines;
    for (const auto& split : splits) {
        model->eval();  // each split from the start of the evaluation stream, as a run's final evaluation
        std::map<std::string, std::string> sigs;
        const auto m = task->evaluate(EvalRequest{*model, data, split, cfg, scratch.string(), &sigs, log});
        Json line = base;
        line["split"] = split;
        Json metrics = Json::object();
        for (const auto& [k, v] : m) metrics[k] = json_number(v, 4);
        line["metrics"] = metrics;
        lines.push_back(line);
    }
    return lines;
}

int cmd_eval_splits(const EvalArgs& a) {
    for (const auto& line : eval_splits(a.run_dir, a.splits, a.overrides)) fmt::print("{}\n", json_line(line));
    return 0;
}

// relpos eval --config CONFIG [--runs GLOB] --split S --out DIR [overrides]: eval --split over the finished runs
// of an experiment (each as `relpos run CONFIG` named it: results_dir/name/runs/<id>), one file per run,
// DIR/<id>.json, its JSON lines; written whole or not at all, an existing one kept (so it resumes).
int cmd_eval_config(const EvalArgs& a) {
    if (a.out.empty())
        throw ConfigError("relpos eval --config: give --out DIR, the directory of one JSON file per run");
    const ExperimentConfig top = load_config(a.config);
    auto points = expand_sweep(top, a.config);
    if (!a.runs_glob.empty()) points = select_matching(points, a.runs_glob, a.config, "--runs");
    const fs::path exp_dir = fs::path(top.results_dir) / top.name, out(a.out);
    std::error_code ec;
    if (fs::exists(out, ec) && !fs::is_directory(out, ec))
        throw ConfigError(fmt::format("--out {}: a file; with --config it is the directory of one JSON file per run",
                                      a.out));
    {  // never among the runs: a finished run's files are never added to or overwritten
        const fs::path o = fs::weakly_canonical(out, ec);
        const auto inside = [&](const fs::path& dir) {
            const fs::path d = fs::weakly_canonical(dir, ec);
            return std::mismatch(o.begin(), o.end(), d.begin(), d.end()).second == d.end();  // d is a prefix of o
        };
        bool in_run = false;
        for (fs::path p = o; !p.empty() && p != p.parent_path(); p = p.parent_path())
            if (fs::exists(p / "results.json", ec)) in_run = true;
        if (in_run || inside(exp_dir / "runs") || (!top.run_store.empty() && inside(top.run_store)))
            throw ConfigError(fmt::format("--out {} is among the experiment's runs, whose directories are never written "
                                          "by eval; give a directory of its own (e.g. {})", a.out,
                                          (exp_dir / "eval").string()));
    }
    struct Job {
        std::string id;
        fs::path dir, file;
    };
    std::vector<Job> jobs;
    std::vector<std::string> unfinished, no_checkpoint;
    std::size_t there = 0;
    for (const auto& p : points) {
        const fs::path dir = exp_dir / "runs" / p.id, file = out / (p.id + ".json");
        if (!fs::exists(dir / "results.json", ec)) {
            unfinished.push_back(p.id);
        } else if (!fs::exists(dir / "checkpoints" / "best" / "state.json", ec)) {
            no_checkpoint.push_back(p.id);
        } else if (fs::exists(file, ec)) {
            ++there;
        } else {
            jobs.push_back({p.id, dir, file});
        }
    }
    // every override checked against every run it will change before any is evaluated
    for (const auto& j : jobs) (void)eval_configs(j.dir.string(), a.splits, a.overrides);
    if (!jobs.empty()) fs::create_directories(out);
    // One subword cache for the command: the runs of an experiment share their corpus, so its SentencePiece
    // model is retrained once, not once a run (each run's own subword.model is still compared byte for byte).
    const ScratchDir cache_dir{fs::temp_directory_path() / fmt::format("relpos-eval-subword-{}", ::getpid())};
    const fs::path& cache = cache_dir.path;
    for (std::size_t i = 0; i < jobs.size(); ++i) {
        fmt::print(stderr, "eval: [{}/{}] {} ({})\n", i + 1, jobs.size(), jobs[i].id, now_iso());
        std::string text;
        for (auto line : eval_splits(jobs[i].dir.string(), a.splits, a.overrides, cache.string())) {
            line["id"] = jobs[i].id;
            text += json_line(line) + "\n";
        }
        write_file_atomic(jobs[i].file, text);
    }
    auto named = [](const std::vector<std::string>& ids) {
        return ids.size() <= 6 ? join(ids) : join(std::vector<std::string>(ids.begin(), ids.begin() + 6)) + ", ...";
    };
    std::string summary = fmt::format("eval --config: {} of {} matched run(s) evaluated into {}", jobs.size(),
                                      points.size(), a.out);
    if (there) summary += fmt::format("; {} there already (kept)", there);
    if (!unfinished.empty()) summary += fmt::format("; {} not finished: {}", unfinished.size(), named(unfinished));
    if (!no_checkpoint.empty())
        summary += fmt::format("; {} without a best checkpoint here (finished in another checkout; "
                               "configs/keep_checkpoints.list keeps those a study needs): {}",
                               no_checkpoint.size(), named(no_checkpoint));
    fmt::print("{}\n", summary);
    return 0;
}

}  // namespace

int cmd_eval(const EvalArgs& a) {
    if (a.run_dir.empty() == a.config.empty())
        throw ConfigError("relpos eval: give --run DIR (one run) or --config CONFIG (the finished runs of an "
                          "experiment, with --split and --out DIR)");
    if (!a.runs_glob.empty() && a.config.empty())
        throw ConfigError("relpos eval: --runs selects runs of --config CONFIG");
    if (!a.config.empty()) {
        if (a.splits.empty() || !a.src.empty() || !a.ref.empty() || a.beam != 0)
            throw ConfigError("relpos eval --config scores splits of each run's own task: give --split (e.g. --split "
                              "test) and --out DIR; --src, --ref and --beam are for one run (--run)");
        return cmd_eval_config(a);
    }
    if (!a.splits.empty()) {
        if (!a.src.empty() || !a.ref.empty() || !a.out.empty() || a.beam != 0)
            throw ConfigError("relpos eval: --split scores a split of the run's own task; --src, --ref, --out and --beam "
                              "are for parallel files (beam size: eval.beam=N)");
        return cmd_eval_splits(a);
    }
    if (!a.overrides.empty())
        throw ConfigError(fmt::format("relpos eval: overrides ({}) go with --split", a.overrides.front()));
    if (a.src.empty() || a.ref.empty())
        throw ConfigError("relpos eval: give --src and --ref (parallel files), or --split (a split of the run's task, "
                          "e.g. --split test)");
    const InputForm form = parse_input_form(a.input);
    check_out_path(a.out);
    {
        std::error_code ec;
        for (const auto& [flag, in] : {std::pair<const char*, const std::string&>{"--src", a.src}, {"--ref", a.ref}})
            if (!a.out.empty() && fs::exists(a.out, ec) && fs::equivalent(a.out, in, ec))
                throw DataError(fmt::format("--out {} is the {} file; writing the hypotheses there would destroy it: "
                                            "give another file", a.out, flag));
    }
    LoadedRun r = load_run(a.run_dir);
    auto src = read_lines(a.src, "--src");
    const auto ref = read_lines(a.ref, "--ref");
    if (src.size() != ref.size())
        throw DataError(fmt::format("--src {} has {} lines but --ref {} has {}", a.src, src.size(), a.ref, ref.size()));
    const bool tokenized_run = reads_tokenized_text(r.cfg);
    if (tokenized_run && form == InputForm::Raw) {
        warn_if_tokenized(r.cfg, src, "--src", a.src);
        warn_if_tokenized(r.cfg, ref, "--ref", a.ref);
    }
    auto ref_tok = ref;  // the references in the form the model writes
    for (auto& s : src) s = model_text(r.cfg, s, r.cfg.data.src, form);
    for (auto& s : ref_tok) s = model_text(r.cfg, s, r.cfg.data.tgt, form);
    std::vector<Example> ex;
    for (std::size_t i = 0; i < src.size(); ++i) ex.push_back({encode_source(r, src[i], i + 1), {}});
    auto hyps = translate_split(*r.model, r.data, ex, decode_options(r.cfg.eval, a.beam),
                                static_cast<std::size_t>(r.cfg.eval.batch_tokens));
    if (!a.out.empty()) write_lines(a.out, hyps);
    // The two metrics of a run's results.json, by the runner's policy (eval/scoring.hpp).
    if (!tokenized_run) {
        fmt::print("BLEU (sacreBLEU 13a)   {}\n", score_bleu("bleu", hyps, ref, false).format());
        fmt::print("BLEU (whitespace tok)  {}\n", score_bleu("bleu_tok", hyps, ref, false).format());
        return 0;
    }
    // bleu_tok against the tokenized references, and bleu (sacreBLEU 13a, case-insensitive) of the
    // untokenized hypotheses against the raw references.
    fmt::print("BLEU (tokenized, lc; bleu_tok)  {}\n", score_bleu("bleu_tok", hyps, ref_tok, true).format());
    if (form == InputForm::Tokenized) {
        fmt::print("BLEU (sacreBLEU 13a, lc; bleu)  not computed: it needs raw references (--input raw)\n");
        return 0;
    }
    fmt::print("BLEU (sacreBLEU 13a, lc; bleu)  {}\n", score_bleu("bleu", hyps, ref, true).format());
    return 0;
}

int cmd_translate(const TranslateArgs& a) {
    const InputForm form = parse_input_form(a.input);
    LoadedRun r = load_run(a.run_dir);
    const DecodeOptions opt = decode_options(r.cfg.eval, a.beam);
    bool warned = false;
    std::string line;
    std::size_t n = 0;
    while (std::getline(std::cin, line)) {
        ++n;
        check_stdin_line(line, n);
        std::string text = model_text(r.cfg, line, r.cfg.data.src, form);
        if (!warned && text != line && looks_tokenized(r.cfg, line)) {
            fmt::print(stderr, "warning: input line {} looks tokenized already (Moses escapes such as &apos;, or a space "
                               "before the final period), and --input raw normalizes it again; pass --input "
                               "tokenized if the input is tokenized\n", n);
            warned = true;
        }
        auto ids = encode_source(r, text, n);
        std::vector<std::size_t> len = {ids.size()};
        if (ids.empty()) {
            std::cout << "\n";
            continue;
        }
        auto out = translate_batch(*r.model, ids, 1, ids.size(), len, opt);
        std::cout << r.data.detokenize(out[0]) << "\n" << std::flush;
    }
    return 0;
}

int cmd_normalize(const std::string& lang, const std::string& task_name) {
    const TaskEntry& task = text_normalizing_task(task_name);
    const auto& langs = task.tokenized_text.languages;
    if (std::find(langs.begin(), langs.end(), lang) == langs.end())
        throw ConfigError(fmt::format("--lang '{}' is not a language of task {}; use {}", lang, task.name,
                                      join(langs, " or ")));
    std::string line;
    for (std::size_t n = 1; std::getline(std::cin, line); ++n) {
        check_stdin_line(line, n);
        std::cout << task.tokenized_text.normalize(line, lang) << "\n";
    }
    return 0;
}

int cmd_list_keys() {
    fmt::print("Config keys (docs/configs.md explains each; model.position's options: relpos list):\n");
    for (const auto& k : describe_config_keys())
        fmt::print("  {:<34} {:<20} default {:<24} {}\n", k.key, k.type, k.default_value.empty() ? "\"\"" : k.default_value,
                   k.allowed);
    return 0;
}

int cmd_list() {
    fmt::print("Position encodings (model.position: {{type: NAME, ...options}}; a list combines several).\n"
               "Every encoding but none also takes randomized: N (int, default 0 = off): at training time each batch's\n"
               "positions are a sorted random subset of [0, N), at evaluation 0, 1, 2, ... (Ruoss et al. 2023); with it,\n"
               "randomized_eval: identity (default), sample_by_length (evaluate and decode at positions drawn the same\n"
               "way, in evaluation batches of one length, as the paper's reference code does; each evaluation restarts a\n"
               "fixed stream, so it is reproducible) or sample (the same in batches that mix lengths: superseded); and\n"
               "for alibi and txl randomized_form: positions (default) or distances (each batch draws the distances of\n"
               "the offsets 1 .. L-1 instead, as the reference code randomizes its relative encodings).\n");
    for (const auto& e : nn::position_registry().entries()) {
        fmt::print("  {:<12} {}\n", e.name, e.summary);
        for (const auto& o : nn::describe_position_options(e.name))
            fmt::print("      {:<16} {:<7} default {:<8} {}{}\n", o.key, o.type, o.default_value, o.range,
                       o.evaluation_only ? "  (evaluation only: relpos eval --run may set it)" : "");
    }
    fmt::print("\nModel families (model.family): encoder_decoder (default), decoder_only (decoder_layers causal layers, "
               "no encoder), encoder_only (encoder_layers bidirectional layers, one prediction per position, no "
               "decoder); every position encoding works in all three (without an encoder-decoder there is no "
               "cross-attention, so each encoding acts in the one stack's self-attention).\n");
    fmt::print("\nTasks (data.task), the model families they train and the metrics they compute (eval.metrics):\n");
    for (const auto& t : task_registry().entries()) {
        fmt::print("  {:<18} {}\n", t.name, t.summary);  // 18: the longest task name
        for (auto f : t.families) {
            std::string ms;
            for (const auto& m : t.metrics.at(f)) ms += (ms.empty() ? "" : ", ") + m;
            fmt::print("      family {:<16} metrics {}\n", nn::family_name(f), ms);
        }
        for (const auto& o : t.options)
            fmt::print("      data.{:<16} {:<7} default {:<8} {}\n", o.key, o.type, o.default_value, o.description);
    }
    return 0;
}

}  // namespace relpos
