// Reliability (docs/reliability.md): bad input, interruptions and numerical faults lose nothing.
//
// Every case drives the relpos binary the way a user would. A broken input (tests/fixtures/broken/)
// must give its documented exit code, exactly one stderr line "error: <file/line/key and what is
// wrong>", no crash, no hang, nothing written for a run that never started, and no change to a
// finished run. A run killed at any moment (SIGKILL, SIGINT) resumes to the same bits as an
// uninterrupted one. A loss that overflows stops with exit code 3 and keeps the last checkpoint.
#include <signal.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/inotify.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <functional>
#include <map>
#include <thread>

#include <catch2/catch.hpp>
#include <yaml-cpp/yaml.h>

#include <nlohmann/json.hpp>

namespace fs = std::filesystem;

namespace {

const std::string kBin = std::string(RELPOS_BINARY_DIR) + "/relpos";
const std::string kSrc = RELPOS_SOURCE_DIR;
// Paths below are relative to kSrc: every command runs there, so messages show them as a user would.
const std::string kBroken = "tests/fixtures/broken/";
const std::string kTinyRun = kBroken + "tiny_run.yaml";
const std::string kTinyCopy = "tests/fixtures/tiny_copy.yaml";

std::string fresh_dir(const std::string& name) {
    const fs::path d = fs::temp_directory_path() / ("relpos-rel-" + name + "-" + std::to_string(getpid()));
    fs::remove_all(d);
    fs::create_directories(d);
    return d.string();
}

std::string slurp(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

void spit(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

struct Result {
    int code;  // exit status; 128 + signal when killed; 124 when `timeout` stopped a hang
    std::string out, err;
};

// Runs `relpos <args>` in the source directory under `timeout 60`, stdout and stderr apart.
Result relpos(const std::string& args, const std::string& stdin_text = "") {
    static int n = 0;
    const std::string base = (fs::temp_directory_path() / ("relpos-rel-io-" + std::to_string(getpid()) + "-" +
                                                           std::to_string(n++))).string();
    spit(base + ".in", stdin_text);
    const std::string cmd = "cd '" + kSrc + "' && timeout -k 5 60 " + kBin + " " + args + " <'" + base + ".in' 2>'" +
                            base + ".err'";
    std::string out;
    FILE* p = popen(cmd.c_str(), "r");
    char buf[4096];
    while (p && fgets(buf, sizeof buf, p)) out += buf;
    const int st = pclose(p);
    Result r{WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st), out, slurp(base + ".err")};
    fs::remove(base + ".in");
    fs::remove(base + ".err");
    return r;
}

// Every file and directory under `dir` with its mtime and bytes: equal snapshots = untouched.
using Snapshot = std::map<std::string, std::pair<long long, std::string>>;
Snapshot snapshot(const fs::path& dir) {
    Snapshot s;
    if (!fs::exists(dir)) return s;
    for (const auto& e : fs::recursive_directory_iterator(dir)) {
        const auto t = fs::last_write_time(e.path()).time_since_epoch().count();
        s[fs::relative(e.path(), dir).string()] = {static_cast<long long>(t),
                                                    e.is_regular_file() ? slurp(e.path()) : std::string("<dir>")};
    }
    return s;
}

// One broken input: the command line after `relpos`, the exit code and what the message must name.
struct Case {
    std::string name;
    std::string args;
    std::vector<std::string> fragments;
    int code;
    std::string stdin_text;
    Case(std::string n, std::string a, std::vector<std::string> f, int c = 2, std::string in = "")
        : name(std::move(n)), args(std::move(a)), fragments(std::move(f)), code(c), stdin_text(std::move(in)) {}
};

// The error contract: the expected code, one stderr line "error: ..." naming what is wrong, no crash.
void expect_error(const Case& c, const Result& r) {
    INFO("case " << c.name << ": relpos " << c.args << "\nexit " << r.code << "\nstderr:\n" << r.err);
    CHECK(r.code == c.code);
    CHECK(r.code < 124);  // not a hang (timeout), not a signal
    // RELPOS_TEST_VERBOSE=1 prints every case and its message (how docs/reliability.md's tables were made).
    if (getenv("RELPOS_TEST_VERBOSE")) fprintf(stderr, "| %s | %d | %s", c.name.c_str(), r.code, r.err.c_str());
    if (c.code == 0) return;
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK_THAT(r.err, Catch::StartsWith("error: "));
    CHECK_THAT(r.err, !Catch::Contains("internal error"));
    for (const auto& f : c.fragments) CHECK_THAT(r.err, Catch::Contains(f));
}

// Trains tests/fixtures/broken/tiny_run.yaml (well under a second) into `results`; returns the run dir.
fs::path train_tiny_run(const std::string& results, const std::string& extra = "") {
    const Result r = relpos("run " + kTinyRun + " results_dir=" + results + " " + extra + " --quiet");
    INFO(r.err);
    REQUIRE(r.code == 0);
    return fs::path(results) / "tiny_run" / "runs" / "seed=1";
}

// ---- starting relpos in the background and killing it at a chosen moment

pid_t spawn(const std::vector<std::string>& args) {
    pid_t pid = fork();
    if (pid == 0) {
        if (chdir(kSrc.c_str()) != 0) _exit(127);
        const int devnull = open("/dev/null", O_WRONLY);
        dup2(devnull, 2);  // progress lines
        std::vector<char*> argv{const_cast<char*>(kBin.c_str())};
        for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
        argv.push_back(nullptr);
        execv(kBin.c_str(), argv.data());
        _exit(127);
    }
    return pid;
}

int wait_exit(pid_t pid) {
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

// A moment in a run: the nth time `name` is created, renamed into place or appended to, in the run
// directory or its checkpoints/ directory (inotify, so a checkpoint directory that exists for a few
// milliseconds is not missed).
struct Moment {
    std::string what;  // for messages
    std::string name;  // "metrics.jsonl", "last.tmp", "last.old", "best.tmp", "hyp.val.txt"
    int nth = 1;
};

// Starts `relpos run args`, sends `sig` at `m`, and returns the exit status. The run directory is
// created first, so that its events are watched from the start.
int interrupt_at(const std::vector<std::string>& args, const fs::path& run_dir, const Moment& m, int sig) {
    fs::create_directories(run_dir);
    const int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    REQUIRE(fd >= 0);
    const std::uint32_t mask = IN_CREATE | IN_MOVED_TO | IN_MODIFY;
    const int run_wd = inotify_add_watch(fd, run_dir.c_str(), mask);
    REQUIRE(run_wd >= 0);
    const pid_t pid = spawn(args);
    int seen = 0;
    bool sent = false;
    alignas(inotify_event) char buf[8192];
    const auto t0 = std::chrono::steady_clock::now();
    while (!sent && std::chrono::steady_clock::now() - t0 < std::chrono::seconds(60)) {
        int st = 0;
        if (waitpid(pid, &st, WNOHANG) == pid) {  // finished before the moment came
            close(fd);
            return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        }
        pollfd pfd{fd, POLLIN, 0};
        if (poll(&pfd, 1, 5) <= 0) continue;  // 5 ms, then look at the child again
        const ssize_t n = read(fd, buf, sizeof buf);
        if (n <= 0) continue;
        for (char* p = buf; p < buf + n && !sent;) {
            const auto* ev = reinterpret_cast<const inotify_event*>(p);
            p += sizeof(inotify_event) + ev->len;
            const std::string name = ev->len ? ev->name : "";
            if (ev->wd == run_wd && name == "checkpoints" && (ev->mask & IN_CREATE))
                inotify_add_watch(fd, (run_dir / "checkpoints").c_str(), mask);
            const bool appears = ev->mask & (IN_CREATE | IN_MOVED_TO);
            const bool appended = (ev->mask & IN_MODIFY) && name == "metrics.jsonl";
            // Appends are counted by the file's lines, not by events: the kernel merges the modify events a
            // lagging reader has not read yet, so on a loaded machine a count of events fell behind the file
            // and the run could finish before the count reached the moment (seen in CI-like runs, "mid epoch 3").
            const auto due = [&] {
                if (name != "metrics.jsonl") return ++seen == m.nth;
                std::ifstream f(run_dir / name);
                const auto lines = std::count(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>(), '\n');
                return lines >= m.nth;
            };
            if (name == m.name && (appears || appended) && due()) {
                kill(pid, sig);
                sent = true;
            }
        }
    }
    close(fd);
    if (!sent) kill(pid, SIGKILL);
    return wait_exit(pid);
}

// What a resumed run must reproduce exactly: the loss lines of metrics.jsonl (timings stripped), the
// hypotheses, the metrics of results.json and the weights of both checkpoints.
struct RunOutcome {
    std::vector<std::string> curve;
    std::map<std::string, std::string> files;
};
RunOutcome outcome_of(const fs::path& run) {
    RunOutcome o;
    std::ifstream f(run / "metrics.jsonl");
    std::string line;
    while (std::getline(f, line)) {
        YAML::Node j = YAML::Load(line);
        std::string s = "step " + j["step"].as<std::string>();
        for (const char* k : {"epoch", "train_loss", "lr", "grad_norm", "tokens", "valid_loss", "valid_ppl", "valid_accuracy"})
            if (j[k]) s += std::string(" ") + k + " " + j[k].as<std::string>();
        o.curve.push_back(s);
    }
    for (const char* h : {"hyp.val.txt", "hyp.test.txt", "attention.tsv"}) o.files[h] = slurp(run / h);
    const YAML::Node res = YAML::LoadFile((run / "results.json").string());
    for (auto it : res["metrics"]) o.files["metric " + it.first.as<std::string>()] = it.second.as<std::string>();
    for (const char* k : {"steps", "epochs_completed", "best_valid_loss", "config_hash"})
        o.files[std::string("results ") + k] = res[k].as<std::string>();
    for (const char* ck : {"best", "last"})
        for (const auto& e : fs::directory_iterator(run / "checkpoints" / ck / "params"))
            o.files[std::string(ck) + "/" + e.path().filename().string()] = slurp(e.path());
    return o;
}

void require_same_outcome(const RunOutcome& got, const RunOutcome& want) {
    REQUIRE(got.curve.size() == want.curve.size());
    for (std::size_t i = 0; i < want.curve.size(); ++i) {
        INFO("metrics.jsonl line " << i + 1);
        REQUIRE(got.curve[i] == want.curve[i]);
    }
    REQUIRE(got.files.size() == want.files.size());
    for (const auto& [k, v] : want.files) {
        INFO(k);
        REQUIRE(got.files.count(k) == 1);
        REQUIRE(got.files.at(k) == v);
    }
}

}  // namespace

// ================================================================ bad configs and command lines

TEST_CASE("reliability/broken_configs", "[reliability][errors]") {
    const std::string out = fresh_dir("configs");
    fs::remove(out);  // must still not exist after every case
    const std::string C = kBroken + "configs/";
    auto cfg = [&](const std::string& file, const std::vector<std::string>& fragments, const std::string& extra = "") {
        return Case{file, "run " + C + file + " results_dir=" + out + " " + extra, fragments};
    };
    auto line = [&](const std::string& file, int l) { return C + file + ":" + std::to_string(l) + ":"; };
    const std::string links = fresh_dir("config-links"), loop = links + "/a.yaml";
    fs::create_symlink(links + "/b.yaml", loop);
    fs::create_symlink(loop, links + "/b.yaml");
    const std::vector<Case> cases = {
        // YAML syntax
        cfg("syntax_tab.yaml", {line("syntax_tab.yaml", 5), "invalid YAML"}),
        cfg("syntax_unclosed_flow.yaml", {line("syntax_unclosed_flow.yaml", 4), "invalid YAML"}),
        cfg("syntax_bad_indent.yaml", {line("syntax_bad_indent.yaml", 4), "invalid YAML"}),
        cfg("duplicate_key.yaml", {line("duplicate_key.yaml", 6), "train.epochs", "duplicate key"}),
        cfg("empty.yaml", {C + "empty.yaml", "empty"}),
        cfg("two_documents.yaml", {line("two_documents.yaml", 4), "2 YAML documents"}),
        cfg("stray_comma.yaml", {line("stray_comma.yaml", 4), "invalid YAML", "',' outside any list or map"}),
        cfg("list_at_top.yaml", {line("list_at_top.yaml", 1), "must be a map"}),
        cfg("not_utf8.yaml", {C + "not_utf8.yaml line 2", "UTF-8"}),
        cfg("nul_byte.yaml", {C + "nul_byte.yaml line 2", "NUL byte"}),  // was "unknown escape character: y"
        cfg("deep_nesting.yaml", {C + "deep_nesting.yaml line 3", "more than 64 levels"}),  // was "bad file"
        // unknown keys
        cfg("unknown_top_key.yaml", {line("unknown_top_key.yaml", 3), "trian", "did you mean 'train'"}),
        cfg("unknown_nested_key.yaml", {line("unknown_nested_key.yaml", 5), "train.warmpu", "did you mean 'warmup'"}),
        cfg("unknown_position_option.yaml", {line("unknown_position_option.yaml", 4), "model.position.clip", "unknown key"}),
        cfg("unknown_task.yaml", {C + "unknown_task.yaml", "data.task", "kopy", "copy"}),
        // wrong types
        cfg("wrong_type_int.yaml", {line("wrong_type_int.yaml", 4), "train.epochs", "integer", "three"}),
        cfg("wrong_type_int_as_float.yaml", {line("wrong_type_int_as_float.yaml", 4), "train.batch_tokens", "4000.5"}),
        cfg("wrong_type_bool.yaml", {line("wrong_type_bool.yaml", 6), "model.scale_embeddings", "true or false", "yes"}),
        cfg("wrong_type_list.yaml", {line("wrong_type_list.yaml", 4), "data.test_splits", "list"}),
        cfg("wrong_type_section.yaml", {line("wrong_type_section.yaml", 3), "model", "map"}),
        // out-of-range values
        cfg("out_of_range_dropout.yaml", {line("out_of_range_dropout.yaml", 4), "model.dropout", "[0, 1)", "1.0"}),
        cfg("out_of_range_lr_zero.yaml", {line("out_of_range_lr_zero.yaml", 4), "train.lr", "> 0"}),
        cfg("out_of_range_vocab.yaml", {line("out_of_range_vocab.yaml", 4), "data.vocab_size", "[100, 64000]", "50"}),
        cfg("nan_value.yaml", {line("nan_value.yaml", 4), "train.label_smoothing", ".nan"}),
        cfg("int_overflow.yaml", {line("int_overflow.yaml", 4), "train.epochs", "99999999999999999999999"}),
        cfg("bad_name.yaml", {line("bad_name.yaml", 1), "name", "../escape"}),
        cfg("missing_name.yaml", {C + "missing_name.yaml", "name", "required"}),
        cfg("huge_model.yaml", {line("huge_model.yaml", 5), "model.d_model", "GiB"}),
        // contradictory options
        cfg("shaw_tie_without_values.yaml", {line("shaw_tie_without_values.yaml", 8), "model.position.tie", "values: true"}),
        cfg("heads_do_not_divide.yaml", {line("heads_do_not_divide.yaml", 5), "model.heads", "30"}),
        cfg("same_src_tgt.yaml", {line("same_src_tgt.yaml", 5), "data.tgt", "differ"}),
        cfg("eval_split_unknown.yaml", {line("eval_split_unknown.yaml", 7), "eval.splits", "tset", "did you mean 'test'"}),
        cfg("report_rows_not_swept.yaml", {line("report_rows_not_swept.yaml", 4), "report.rows"}),
        cfg("sweep_repeated_seed.yaml", {line("sweep_repeated_seed.yaml", 4), "sweep.seeds", "repeats"}),
        cfg("sweep_overlapping_keys.yaml", {line("sweep_overlapping_keys.yaml", 8), "overlaps"}),
        cfg("sweep_bad_point.yaml", {line("sweep_bad_point.yaml", 7), "sweep.grid.model.heads", "64"}),
        cfg("position_without_type.yaml", {line("position_without_type.yaml", 4), "model.position.type", "required"}),
        cfg("synthetic_bad_length_range.yaml", {line("synthetic_bad_length_range.yaml", 4), "data.synthetic.train_len"}),
        cfg("learned_table_too_short.yaml", {line("learned_table_too_short.yaml", 11), "model.position.max_len", "9"}),
        cfg("data_dir_is_a_file.yaml", {line("data_dir_is_a_file.yaml", 4), "data.dir", "not a directory"}),
        // paths
        Case{"results_dir_under_a_file.yaml", "run " + C + "results_dir_under_a_file.yaml",
             {C + "results_dir_under_a_file.yaml", "results_dir", "is a file, not a directory"}},
        Case{"no such config", "run " + C + "no_such.yaml results_dir=" + out, {"no_such.yaml", "does not exist"}},
        Case{"config is a directory", "run " + C + " results_dir=" + out, {C, "directory"}},
        Case{"config is a loop of symbolic links", "run " + loop + " results_dir=" + out, {loop, "symbolic link"}},
        // a 300-character name: was exit code 1, "cannot read or write files: File name too long"
        cfg("../tiny_run.yaml", {"name", "at most 100 characters", "300"}, "name=" + std::string(300, 'n')),
        // command-line overrides
        cfg("../tiny_run.yaml", {"command-line override 'train.epochs'", "key=value"}, "train.epochs"),
        cfg("../tiny_run.yaml", {"command-line override", "model.position", "not valid YAML"}, "'model.position={type: shaw'"),
        cfg("../tiny_run.yaml", {"command-line override", "train.lr", "1e400"}, "train.lr=1e400"),
        cfg("../tiny_run.yaml", {"command-line override", "sweep.grid.model.position.k", "list"}, "sweep.grid.model.position.k=4"),
        cfg("../tiny_run.yaml", {"command-line override", "model.position[2]"}, "model.position[2].k=4"),
        cfg("../tiny_run.yaml", {C + "../tiny_run.yaml", "data.synthetic", "n_symbols"}, "data.synthetic.n_symbols=2000000"),
        cfg("../tiny_run.yaml", {"command-line override", "data.synthetic.train_size", "GiB", "lower it"},
            "data.synthetic.train_size=900000000000"),
        // usage
        Case{"no config", "run", {"config", "--help"}},
        Case{"unknown command", "frobnicate", {"'frobnicate' is not a relpos command", "run, report"}},
        Case{"--jobs 0", "run " + kTinyRun + " --jobs 0", {"--jobs", "1 to 4096"}},
        Case{"--shard out of range", "run " + kTinyRun + " results_dir=" + out + " --shard 3/2", {"shard", "3/2"}},
        // sizes bounded up front (before: 7.7 GB read from /dev/zero; threads=1000000 failed after 11 s)
        Case{"config is /dev/zero", "run /dev/zero", {"/dev/zero", "not a regular file"}},
        Case{"--list validates plug-in options", "run " + kTinyRun + " results_dir=" + out +
             " 'model.position={type: shaw, k: 2, tie: true, values: false}' --list", {"model.position.tie", "values: true"}},
        Case{"threads=1000000", "run " + kTinyRun + " results_dir=" + out + " threads=1000000", {"threads", "[1, 1024]"}},
        Case{"eval.beam huge", "run " + kTinyRun + " results_dir=" + out + " eval.beam=100000000", {"eval.beam", "[1, 64]"}},
        Case{"translate --beam -3", "translate --run " + out + " --beam -3", {"--beam", "1 to 64"}},
        Case{"translate --beam 100000", "translate --run " + out + " --beam 100000", {"--beam", "1 to 64"}},
        Case{"eval --beam 0", "eval --run " + out + " --src x --ref y --beam 0", {"--beam", "1 to 64"}},
    };
    REQUIRE(cases.size() >= 30);
    for (const auto& c : cases) {
        const Result r = relpos(c.args);
        expect_error(c, r);
        INFO(c.name);
        CHECK_FALSE(fs::exists(out));  // nothing written
    }
    CHECK_FALSE(fs::exists(kSrc + "/" + C + "results_dir_under_a_file.yaml/results"));
    fs::remove_all(links);
}

namespace {
// Every byte of an error line is visible: one "\n" at the end, no other control byte, no stray byte.
void expect_visible(const std::string& err) {
    INFO(err);
    REQUIRE_FALSE(err.empty());
    const auto hidden = std::find_if(err.begin(), err.end() - 1, [](char c) {
        return static_cast<unsigned char>(c) < 0x20 || c == '\x7f' || c == '\xe9';
    });
    CHECK(hidden == err.end() - 1);
}
}  // namespace

TEST_CASE("reliability/a_non_utf8_override_is_refused_before_anything_is_written", "[reliability][errors][config]") {
    // `relpos run CONFIG $'description=caf\351'` used to train and write the Latin-1 byte into the run's
    // config.yaml, which eval, translate and report then refused as not UTF-8. An override is config text
    // and follows the config file's rule; the message shows the byte escaped.
    const std::string out = fresh_dir("override-utf8");
    fs::remove(out);
    const std::string run = "run " + kTinyRun + " results_dir=" + out + " ";
    for (const std::string& args : {run + "'description=caf\xe9' --quiet", run + "--list 'description=caf\xe9'",
                                    run + "'data.synthetic={n_symbols: 8, note: \xe9t\xe9}' --quiet"}) {
        const Result r = relpos(args);
        expect_error(Case{args, args, {"command-line override '", "\\xE9", "is not valid UTF-8 (a config is UTF-8 text"}}, r);
        expect_visible(r.err);
        CHECK_FALSE(fs::exists(out));
    }
    const Result r = relpos(run + "'description=caf\xe9' --quiet");
    CHECK_THAT(r.err, Catch::Contains("override 'description=caf\\xE9' is not valid UTF-8"));
    // The same text in UTF-8 is a fine description.
    CHECK(relpos(run + "'description=caf\xc3\xa9' --quiet").code == 0);
    CHECK(relpos("translate --run " + out + "/tiny_run/runs/seed=1", "4 5\n").code == 0);
    fs::remove_all(out);
}

TEST_CASE("reliability/control_bytes_in_messages_are_escaped", "[reliability][errors][config]") {
    // `train.lr=1\x01` was refused with "got '1'" and the invisible byte printed raw after it.
    const std::string out = fresh_dir("control-bytes");
    const std::string run = "run " + kTinyRun + " results_dir=" + out + "/results ";
    const std::string cfg = out + "/control.yaml";
    std::string text = slurp(kSrc + "/" + kTinyRun);
    const auto train = text.find("train: {");
    REQUIRE(train != std::string::npos);
    text.insert(train + 8, "lr: \"1\\x07\", ");  // a YAML escape: the value holds the byte 0x07
    spit(cfg, text);
    std::string unknown = slurp(kSrc + "/" + kTinyRun) + "\"tr\\x01ain\": 1\n";
    spit(out + "/unknown.yaml", unknown);
    const std::vector<Case> cases = {
        {"override value", run + "'train.lr=1\x01'", {"command-line override 'train.lr=1\\x01'", "got '1\\x01'"}},
        {"override key", run + "'tr\x01in.lr=1'", {"'tr\\x01in.lr'", "is not a dotted key"}},
        {"override in a list", run + "'eval.splits=[val, te\x1bst]'", {"eval.splits", "'te\\x1Bst' is not a split"}},
        {"config file value", run.substr(0, 4) + cfg + " results_dir=" + out + "/results",
         {cfg + ":", "train.lr", "got '1\\x07'"}},
        {"config file key", run.substr(0, 4) + out + "/unknown.yaml results_dir=" + out + "/results",
         {"tr\\x01ain: unknown key"}},
    };
    for (const auto& c : cases) {
        const Result r = relpos(c.args);
        expect_error(c, r);
        expect_visible(r.err);
        CHECK_FALSE(fs::exists(out + "/results"));
    }
    fs::remove_all(out);
}

// ================================================================ bad data files

TEST_CASE("reliability/broken_data", "[reliability][errors]") {
    const std::string out = fresh_dir("data");
    fs::remove(out);
    const std::string D = kBroken + "data/";
    auto m30k = [&](const std::string& name, const std::string& overrides, const std::vector<std::string>& fragments) {
        return Case{name, "run " + kBroken + "multi30k_tiny.yaml results_dir=" + out + " " + overrides, fragments};
    };
    const std::string ctx = "key data.dir = ";
    const std::vector<Case> run_cases = {
        m30k("missing file", "data.dir=" + D + "missing_file", {D + "missing_file/val.en.gz", "does not exist", ctx}),
        m30k("empty file", "data.dir=" + D + "empty_file", {D + "empty_file/train.en.gz", "is empty", ctx}),
        m30k("not UTF-8", "data.dir=" + D + "not_utf8", {D + "not_utf8/val.de.gz line 1", "UTF-8", ctx}),
        m30k("line counts differ", "data.dir=" + D + "line_mismatch",
             {D + "line_mismatch/train.de.gz has 4", D + "line_mismatch/train.en.gz has 3", ctx}),
        m30k("truncated gzip", "data.dir=" + D + "truncated_gzip", {D + "truncated_gzip/train.de.gz", "gzip", ctx}),
        m30k("file is a directory", "data.dir=" + D + "file_is_directory",
             {D + "file_is_directory/val.de.gz", "is a directory", ctx}),
        m30k("tokenized files missing", "data.dir=" + D + "ok data.tokenized=true",
             {D + "ok/tok/train.lc.norm.tok.de.gz", "does not exist", ctx}),
        m30k("split missing", "data.dir=" + D + "ok data.test_splits=[test2017]", {D + "ok/test2017.de.gz", "does not exist"}),
        m30k("vocabulary larger than the text allows", "data.dir=" + D + "ok data.vocab_size=64000",
             {kBroken + "multi30k_tiny.yaml", "data.vocab_size", "64000"}),
        m30k("data.dir does not exist", "data.dir=" + D + "nope", {"data.dir", "does not exist"}),
        // found before training, not after it (and on every rerun), and without a subword cache left behind
        m30k("an empty reference line", "data.dir=" + D + "empty_reference",
             {"split 'val' has an empty reference on line 3"}),
        m30k("data.max_len drops every pair", "data.dir=" + D + "empty_reference data.max_len=1",
             {"no training examples are left", "data.max_len is 1"}),
        // a source the run would decode is bounded as eval and translate bound theirs (found before training)
        m30k("a validation source longer than the decoding bound", "data.dir=" + D + "long_source",
             {"split 'val' line 1 has a source of", "at most 1024 tokens"}),
    };
    for (const auto& c : run_cases) {
        expect_error(c, relpos(c.args));
        INFO(c.name);
        CHECK_FALSE(fs::exists(out));  // not even the subword cache
    }

    // eval and translate read data too; the run they read from is never changed.
    const std::string runs = fresh_dir("data-run");
    const fs::path run = train_tiny_run(runs);
    const Snapshot before = snapshot(fs::path(runs));
    const std::string ev = "eval --run " + run.string() + " ";
    const std::vector<Case> eval_cases = {
        {"--src missing", ev + "--src " + D + "missing_file/val.en.gz --ref " + D + "ok/val.en.gz",
         {"missing_file/val.en.gz", "does not exist", "--src"}},
        {"--src not UTF-8", ev + "--src " + D + "not_utf8/val.de.gz --ref " + D + "ok/val.en.gz",
         {"not_utf8/val.de.gz line 1", "UTF-8"}},
        {"--src and --ref line counts differ", ev + "--src " + D + "line_mismatch/train.de.gz --ref " + D +
         "line_mismatch/train.en.gz", {"has 4 lines", "has 3"}},
        {"--ref empty", ev + "--src " + D + "ok/val.de.gz --ref " + D + "empty_file/train.en.gz",
         {"empty_file/train.en.gz", "is empty"}},
        {"--out in a missing directory", ev + "--src " + D + "ok/val.de.gz --ref " + D + "ok/val.en.gz --out " + runs +
         "/no/such/dir/hyp.txt", {"--out", "does not exist"}},
        {"translate: not a symbol id", "translate --run " + run.string(), {"input line 2", "'x'"}, 2, "4 5\n4 x\n"},
        // the control byte is shown escaped, not printed raw (invisible) after the x
        {"translate: a symbol with a control byte", "translate --run " + run.string(), {"input line 1", "'x\\x01'"}, 2,
         "x\x01 4\n"},
        // Latin-1 (or binary) stdin used to reach the tokenizer; it is refused like a non-UTF-8 --src file.
        {"translate: stdin not UTF-8", "translate --run " + run.string(), {"stdin line 2", "UTF-8", "iconv"}, 2,
         "4 5\ncaf\xe9 4\n"},
        {"normalize: stdin not UTF-8", "normalize --lang de", {"stdin line 1", "UTF-8"}, 2, "M\xfcnchen\n"},
        // A 1,025-token line used to run until it ran out of memory ("out of memory"); it is bounded up front.
        {"translate: a line longer than 1024 tokens", "translate --run " + run.string(),
         {"input line 1", "1025 tokens", "up to 1024"}, 2, [] {
             std::string line;
             for (int i = 0; i < 1025; ++i) line += "4 ";
             return line + "\n";
         }()},
    };
    for (const auto& c : eval_cases) expect_error(c, relpos(c.args, c.stdin_text));
    CHECK(snapshot(fs::path(runs)) == before);
    fs::remove_all(runs);
}

// ================================================================ bad checkpoints

TEST_CASE("reliability/broken_checkpoints", "[reliability][errors][checkpoint]") {
    const std::string base = fresh_dir("ckpt");
    const fs::path finished = train_tiny_run(base + "/finished");
    // An interrupted run (SIGINT once a checkpoint exists) for the resume cases.
    const std::string epochs = "train.epochs=200";
    const fs::path interrupted = fs::path(base) / "interrupted" / "tiny_run" / "runs" / "seed=1";
    const int rc = interrupt_at({"run", kTinyRun, "results_dir=" + base + "/interrupted", epochs, "--quiet"}, interrupted,
                                {"second checkpoint", "last.tmp", 2}, SIGINT);
    REQUIRE(rc == 130);
    REQUIRE(fs::exists(interrupted / "checkpoints/last/optim"));

    const std::string emb = "params/src_embed.weight.npy";
    struct CkCase {
        std::string name;
        bool resume;  // relpos run on a copy of the interrupted run, else eval on a copy of the finished one
        std::function<void(const fs::path&)> damage;
        std::vector<std::string> fragments;
        std::string extra = "";
    };
    auto truncate = [](const fs::path& f, std::uintmax_t cut) { fs::resize_file(f, fs::file_size(f) - cut); };
    auto edit = [](const fs::path& f, const std::string& from, const std::string& to) {
        std::string s = slurp(f);
        const auto p = s.find(from);
        REQUIRE(p != std::string::npos);
        s.replace(p, from.size(), to);
        spit(f, s);
    };
    const std::vector<CkCase> cases = {
        {"config edited to another d_model", false, [&](const fs::path& r) { edit(r / "config.yaml", "d_model: 16", "d_model: 32"); },
         {"src_embed.weight", "(12, 16)", "(12, 32)", "different model"}},
        {"truncated parameter", false, [&](const fs::path& r) { truncate(r / "checkpoints/best" / emb, 10); },
         {"best/" + emb, "truncated"}},
        {"parameter with extra bytes", false, [&](const fs::path& r) { std::ofstream(r / "checkpoints/best" / emb, std::ios::app) << "xx"; },
         {"best/" + emb, "more than shape"}},
        {"parameter that is not .npy", false, [&](const fs::path& r) { spit(r / "checkpoints/best" / emb, "hello\n"); },
         {"best/" + emb, "bad magic"}},
        {"corrupt shape in the header", false, [&](const fs::path& r) { edit(r / "checkpoints/best" / emb, "(12,16)", "(1x,16)"); },
         {"best/" + emb, "bad shape entry '1x'"}},
        {"integer dtype", false, [&](const fs::path& r) { edit(r / "checkpoints/best" / emb, "<f4", "<i4"); },
         {"best/" + emb, "dtype <i4"}},
        {"parameter missing", false, [&](const fs::path& r) { fs::remove(r / "checkpoints/best" / emb); },
         {"checkpoints/best", "no parameter 'src_embed.weight'"}},
        {"rng.npy truncated", false, [&](const fs::path& r) { truncate(r / "checkpoints/best/rng.npy", 8); },
         {"best/rng.npy", "truncated"}},
        // was "internal error: basic_filebuf::underflow error reading the file: Is a directory"
        {"parameter path is a directory", false,
         [&](const fs::path& r) {
             fs::remove(r / "checkpoints/best" / emb);
             fs::create_directory(r / "checkpoints/best" / emb);
         },
         {"best/" + emb, "not a regular file"}},
        // was "no best checkpoint yet (train the run first)", as if it had never been trained
        {"best/state.json missing", false, [&](const fs::path& r) { fs::remove(r / "checkpoints/best/state.json"); },
         {"checkpoints/best", "incomplete (no state.json)"}},
        {"state.json not JSON", false, [&](const fs::path& r) { spit(r / "checkpoints/best/state.json", "garbage: [\n"); },
         {"checkpoints/best", "unreadable state.json"}},
        {"state.json field missing", false, [&](const fs::path& r) { spit(r / "checkpoints/best/state.json", "{\"step\": 1}\n"); },
         {"checkpoints/best", "'epoch' is missing"}},
        {"no best checkpoint", false, [&](const fs::path& r) { fs::remove_all(r / "checkpoints/best"); },
         {"no best checkpoint"}},
        // both were "no best checkpoint yet (train the run first)": wrong advice, training does not replace them
        {"best is a file", false,
         [&](const fs::path& r) {
             fs::remove_all(r / "checkpoints/best");
             spit(r / "checkpoints/best", "x\n");
         },
         {"checkpoints/best is a file, where a run keeps its best checkpoint", "move it away"}},
        {"checkpoints is a file", false,
         [&](const fs::path& r) {
             fs::remove_all(r / "checkpoints");
             spit(r / "checkpoints", "x\n");
         },
         {"seed=1/checkpoints is a file, where a run keeps its checkpoints", "move it away"}},
        {"config.yaml missing", false, [&](const fs::path& r) { fs::remove(r / "config.yaml"); }, {"not a run directory"}},
        {"config.yaml broken", false, [&](const fs::path& r) { std::ofstream(r / "config.yaml", std::ios::app) << "model: {d_model: [\n"; },
         {"config.yaml:", "invalid YAML"}},
        {"resume: truncated parameter", true, [&](const fs::path& r) { truncate(r / "checkpoints/last" / emb, 10); },
         {"last/" + emb, "truncated"}},
        {"resume: truncated Adam moment", true,
         [&](const fs::path& r) { truncate(r / "checkpoints/last/optim/src_embed.weight.m.npy", 4); },
         {"optim/src_embed.weight.m.npy", "truncated"}},
        {"resume: Adam moment missing", true, [&](const fs::path& r) { fs::remove(r / "checkpoints/last/optim/src_embed.weight.v.npy"); },
         {"optim/src_embed.weight.v.npy", "missing"}},
        {"resume: state.json broken", true, [&](const fs::path& r) { spit(r / "checkpoints/last/state.json", "{\"step\": \"many\"}\n"); },
         {"checkpoints/last", "malformed state.json", "'step'"}},
        {"resume: state.json machines not a list of strings", true,
         [&](const fs::path& r) { edit(r / "checkpoints/last/state.json", "\"machines\": [", "\"machines\": [1, "); },
         {"checkpoints/last", "malformed state.json", "'machines' is not a list of strings"}},
        {"resume: another config", true, [&](const fs::path&) {}, {kTinyRun, "different configuration", "config.yaml"},
         "train.lr=0.5"},
        {"resume: another model shape", true, [&](const fs::path&) {}, {kTinyRun, "different configuration"}, "model.d_ff=32"},
    };
    int n = 0;
    for (const auto& c : cases) {
        const std::string dir = base + "/case" + std::to_string(n++);
        const fs::path run = fs::path(dir) / "tiny_run" / "runs" / "seed=1";
        fs::create_directories(run.parent_path());
        fs::copy(c.resume ? interrupted : finished, run, fs::copy_options::recursive);
        c.damage(run);
        const Snapshot before = snapshot(dir);
        const std::string args = c.resume ? "run " + kTinyRun + " results_dir=" + dir + " " + epochs + " " + c.extra
                                          : "eval --run " + run.string() + " --src " + kBroken + "data/ok/val.de.gz --ref " +
                                                kBroken + "data/ok/val.en.gz";
        expect_error(Case{c.name, args, c.fragments}, relpos(args));
        INFO(c.name);
        CHECK(snapshot(dir) == before);  // the broken run is left exactly as it was
        if (!c.resume) {  // translate reads the same checkpoint
            const Result t = relpos("translate --run " + run.string(), "4 5 6\n");
            expect_error(Case{c.name + " (translate)", "translate", c.fragments}, t);
        }
    }
    fs::remove_all(base);
}

// ================================================================ finished runs are never touched

TEST_CASE("reliability/finished_run_untouched", "[reliability][errors]") {
    const std::string results = fresh_dir("finished");
    const fs::path run = train_tiny_run(results);
    const fs::path exp = run.parent_path().parent_path();
    const Snapshot before = snapshot(run);
    const std::string again = "run " + kTinyRun + " results_dir=" + results + " --quiet ";
    const std::string ev = "eval --run " + run.string() + " --src " + kBroken + "data/ok/val.de.gz --ref " + kBroken;
    const std::string ids = results + "/ids.txt";  // the copy task's symbols
    spit(ids, "4 5 6\n5 6 7\n");
    const std::vector<Case> cases = {
        {"same config again: skipped", again, {}, 0},
        {"another thread count: same run, skipped", again + "threads=2", {}, 0},
        {"grown sweep: the new seed runs, the old is skipped", again + "sweep.seeds=[1,2]", {}, 0},
        {"another config under the same id", again + "train.epochs=3", {"seed=1", "different configuration", "never overwritten"}},
        {"another model under the same id", again + "model.position.k=3", {"different configuration"}},
        {"a broken override", again + "train.epochs=-1", {"train.epochs", "-1"}},
        {"eval with misaligned files", ev + "data/line_mismatch/train.en.gz", {"has 2 lines", "has 3"}},
        {"eval --out into the finished run", ev + "data/ok/val.en.gz --out " + (run / "hyp.val.txt").string(),
         {"--out", "finished run", "never overwritten"}},
        {"eval --out is the run directory", ev + "data/ok/val.en.gz --out " + run.string(), {"--out", "is a directory"}},
        {"eval", "eval --run " + run.string() + " --src " + ids + " --ref " + ids + " --out " + results + "/hyp.txt", {}, 0},
        {"translate", "translate --run " + run.string(), {}, 0, "4 5 6\n"},
        {"report", "report " + exp.string(), {}, 0},
    };
    for (const auto& c : cases) {
        const Result r = relpos(c.args, c.stdin_text);
        expect_error(c, r);
        INFO(c.name);
        CHECK(snapshot(run) == before);
    }
    CHECK(fs::exists(exp / "runs" / "seed=2" / "results.json"));  // the grown sweep's new point

    // A results.json that relpos did not write (no config_hash) is refused, not overwritten.
    const fs::path odd = fs::path(results) / "odd" / "tiny_run" / "runs" / "seed=1";
    fs::create_directories(odd.parent_path());
    fs::copy(run, odd, fs::copy_options::recursive);
    spit(odd / "results.json", "{\"metrics\": {}}\n");
    const Snapshot odd_before = snapshot(odd);
    expect_error(Case{"results.json without config_hash", "", {"without a config_hash", "never overwritten"}},
                 relpos("run " + kTinyRun + " results_dir=" + results + "/odd --quiet"));
    CHECK(snapshot(odd) == odd_before);
    fs::remove_all(results);
}

// Found by fuzz/fuzz_config.cpp: config_hash and to_yaml sorted an encoding's options by swapping
// YAML::Node handles, whose assignment writes into the config itself, so {type: shaw, values: false,
// k: 3} was saved (and then built) as k: false. A config's hash and saved form must leave it alone.
TEST_CASE("reliability/saving_a_config_does_not_change_it", "[reliability][config]") {
    const std::string dir = fresh_dir("canonical");
    const Result r = relpos("run " + kTinyRun + " results_dir=" + dir + " 'model.position={type: shaw, values: false, k: 3}' --quiet");
    INFO(r.err);
    REQUIRE(r.code == 0);
    const fs::path run = fs::path(dir) / "tiny_run" / "runs" / "seed=1";
    const YAML::Node saved = YAML::LoadFile((run / "config.yaml").string())["model"]["position"];
    CHECK(saved["k"].as<std::string>() == "3");
    CHECK(saved["values"].as<std::string>() == "false");
    CHECK(fs::exists(run / "checkpoints/best/params/encoder.layers.0.self_attn.rel_k.npy"));
    CHECK_FALSE(fs::exists(run / "checkpoints/best/params/encoder.layers.0.self_attn.rel_v.npy"));
    fs::remove_all(dir);
}

// ================================================================ interruptions

TEST_CASE("reliability/killed_anywhere_resumes_bit_identical", "[reliability][resume]") {
    // tiny_copy: 36 steps in 3 epochs, a last checkpoint every 5 steps and at each epoch end, a best
    // checkpoint when the validation loss improves (steps 12 and 36), then decoding. The runs that are
    // killed decode a test split of 1,000 examples, so that a signal that arrives late on a loaded machine
    // (the kernel merges file events a lagging reader has not read yet) still lands before the run ends:
    // with 40 examples decoding takes milliseconds.
    const std::string long_decode = "data.synthetic.test_size=1000";
    std::map<std::string, RunOutcome> wants;  // by extra override
    std::vector<std::string> ref_dirs;
    auto want_for = [&](const std::string& extra) -> const RunOutcome& {
        if (!wants.count(extra)) {
            ref_dirs.push_back(fresh_dir("kill-ref"));
            std::vector<std::string> ref_args = {"run", kTinyCopy, "results_dir=" + ref_dirs.back(), "--quiet"};
            if (!extra.empty()) ref_args.push_back(extra);
            REQUIRE(wait_exit(spawn(ref_args)) == 0);
            wants[extra] = outcome_of(fs::path(ref_dirs.back()) / "tiny_copy/runs/seed=3");
        }
        return wants.at(extra);
    };
    const RunOutcome want = want_for("");
    REQUIRE(want.curve.size() > 30);

    struct Kill {
        Moment moment;
        std::string extra;  // an override for this moment's run and its reference
    };
    const std::vector<Kill> kills = {
        {{"after 3 steps, before any checkpoint", "metrics.jsonl", 3}, long_decode},
        {{"while the first checkpoint is written", "last.tmp", 1}, long_decode},
        {{"between the renames of the epoch-end checkpoint", "last.old", 3}, long_decode},
        {{"while the best checkpoint is written", "best.tmp", 1}, long_decode},
        {{"while a later checkpoint is written", "last.tmp", 5}, long_decode},
        {{"mid epoch 3", "metrics.jsonl", 30}, long_decode},
        {{"while decoding", "hyp.val.txt", 1}, long_decode},
    };
    for (const auto& [m, extra] : kills) {
        INFO("SIGKILL " << m.what);
        const std::string dir = fresh_dir("kill");
        const fs::path run = fs::path(dir) / "tiny_copy/runs/seed=3";
        std::vector<std::string> args = {"run", kTinyCopy, "results_dir=" + dir, "--quiet"};
        if (!extra.empty()) args.push_back(extra);
        const int rc = interrupt_at(args, run, m, SIGKILL);
        REQUIRE(rc == 128 + SIGKILL);
        REQUIRE_FALSE(fs::exists(run / "results.json"));
        if (getenv("RELPOS_TEST_VERBOSE")) {
            std::string st = m.what + ":";
            if (fs::exists(run / "checkpoints"))
                for (const auto& e : fs::directory_iterator(run / "checkpoints")) st += " " + e.path().filename().string();
            fprintf(stderr, "%s\n", st.c_str());
        }
        const Result r = relpos("run " + kTinyCopy + " results_dir=" + dir + " " + extra + " --quiet");
        INFO(r.err);
        REQUIRE(r.code == 0);
        require_same_outcome(outcome_of(run), want_for(extra));
        fs::remove_all(dir);
    }

    // Ctrl-C while the last run is decoding: that run had finished training, so it is evaluated and
    // written, and nothing is left to resume: exit code 0 (it used to be 130 with the run complete).
    {
        const std::string dir = fresh_dir("sigint-decoding");
        const fs::path run = fs::path(dir) / "tiny_copy/runs/seed=3";
        const int rc = interrupt_at({"run", kTinyCopy, "results_dir=" + dir, "--quiet", long_decode}, run,
                                    {"while decoding", "hyp.val.txt", 1}, SIGINT);
        CHECK(rc == 0);
        REQUIRE(fs::exists(run / "results.json"));
        require_same_outcome(outcome_of(run), want_for(long_decode));
        fs::remove_all(dir);
    }

    // Ctrl-C: exit 130 with a checkpoint; `relpos run` again finishes with the same bits.
    const std::string dir = fresh_dir("sigint");
    const fs::path run = fs::path(dir) / "tiny_copy/runs/seed=3";
    const int rc = interrupt_at({"run", kTinyCopy, "results_dir=" + dir, "--quiet"}, run, {"mid epoch 1", "metrics.jsonl", 8},
                                SIGINT);
    REQUIRE(rc == 130);
    REQUIRE(fs::exists(run / "checkpoints/last/state.json"));
    REQUIRE_FALSE(fs::exists(run / "results.json"));
    const Result r = relpos("run " + kTinyCopy + " results_dir=" + dir + " --quiet");
    INFO(r.err);
    REQUIRE(r.code == 0);
    require_same_outcome(outcome_of(run), want);
    fs::remove_all(dir);
    for (const auto& d : ref_dirs) fs::remove_all(d);
}

// A run resumed in another session may continue on another machine (a CPU with other BLAS kernels gives
// other bits): every start and resume names its machine and binary in log.txt, the checkpoint keeps the
// list, and results.json's trained_on names every machine that trained the run, the first one "not
// recorded (steps 1-N)" when the checkpoint was written before relpos kept the list.
TEST_CASE("reliability/a_resumed_run_records_every_machine_it_trained_on", "[reliability][resume]") {
    const std::string other = "Other CPU, 2 cores, OpenBLAS kernels Haswell";
    for (const bool recorded : {true, false}) {
        INFO((recorded ? "the checkpoint names another machine" : "the checkpoint has no list"));
        const std::string dir = fresh_dir("machines");
        const fs::path run = fs::path(dir) / "tiny_copy/runs/seed=3";
        REQUIRE(interrupt_at({"run", kTinyCopy, "results_dir=" + dir, "--quiet"}, run, {"mid epoch 1", "metrics.jsonl", 8},
                             SIGINT) == 130);
        const fs::path state = run / "checkpoints/last/state.json";
        nlohmann::ordered_json st = nlohmann::ordered_json::parse(slurp(state));
        REQUIRE(st["machines"].size() == 1);
        const std::string here = st["machines"][0].get<std::string>();
        const auto step = st["step"].get<std::uint64_t>();
        REQUIRE(step > 0);
        // the CPU time so far: written with each checkpoint; a checkpoint from before it was (as one without the
        // machine list) leaves the run's total unknown
        REQUIRE(st.contains("cpu_seconds"));
        const double cpu_before = st["cpu_seconds"].get<double>();
        CHECK(cpu_before > 0);
        if (recorded) st["machines"] = {other};
        else st.erase("machines"), st.erase("cpu_seconds");
        std::ofstream(state) << st.dump(2);

        const Result r = relpos("run " + kTinyCopy + " results_dir=" + dir + " --quiet");
        INFO(r.err);
        REQUIRE(r.code == 0);
        const nlohmann::ordered_json res = nlohmann::ordered_json::parse(slurp(run / "results.json"));
        const std::vector<std::string> want = {recorded ? other : "not recorded (steps 1-" + std::to_string(step) + ")", here};
        CHECK(res["trained_on"].get<std::vector<std::string>>() == want);
        CHECK(res["machine"].get<std::string>() == here);
        CHECK(res.contains("train_cpu_seconds") == recorded);
        if (recorded) CHECK(res["train_cpu_seconds"].get<double>() > cpu_before);
        // The log names the machine at the first start and again at the resume.
        const std::string log = slurp(run / "log.txt"), named = "; " + here + "; relpos ";
        std::size_t n = 0;
        for (auto at = log.find(named); at != std::string::npos; at = log.find(named, at + 1)) ++n;
        CHECK(n == 2);
        // The report's provenance line names every machine that trained a run (not the unrecorded stretch).
        const Result rep = relpos("report " + dir + "/tiny_copy");
        INFO(rep.err);
        REQUIRE(rep.code == 0);
        const std::string md = slurp(fs::path(dir) / "tiny_copy/report.md");
        const auto at = md.find("Machine: ");
        REQUIRE(at != std::string::npos);
        const std::string line = md.substr(at, md.find('\n', at) - at);
        INFO(line);
        CHECK(line.find(here) != std::string::npos);
        CHECK((line.find(other) != std::string::npos) == recorded);
        CHECK(line.find("not recorded") == std::string::npos);
        CHECK((md.find("core-hours of CPU time") != std::string::npos) == recorded);  // the training summary line
        fs::remove_all(dir);
    }
}

// With checkpoint_every dividing the steps of an epoch, a kill after the epoch-end validation line but
// before the epoch-end checkpoint must not leave that line twice after resuming (the trainer skips the
// periodic checkpoint on a step that ends the epoch or the run).
TEST_CASE("reliability/killed_after_epoch_end_validation_resumes_bit_identical", "[reliability][resume]") {
    const std::vector<std::string> every4 = {"train.checkpoint_every=4", "--quiet"};  // 12 steps per epoch
    const std::string ref_dir = fresh_dir("kill4-ref");
    std::vector<std::string> args = {"run", kTinyCopy, "results_dir=" + ref_dir};
    args.insert(args.end(), every4.begin(), every4.end());
    REQUIRE(wait_exit(spawn(args)) == 0);
    const RunOutcome want = outcome_of(fs::path(ref_dir) / "tiny_copy/runs/seed=3");
    const std::string dir = fresh_dir("kill4");
    const fs::path run = fs::path(dir) / "tiny_copy/runs/seed=3";
    args[2] = "results_dir=" + dir;
    REQUIRE(interrupt_at(args, run, {"while the first best checkpoint is written", "best.tmp", 1}, SIGKILL) == 128 + SIGKILL);
    const Result r = relpos("run " + kTinyCopy + " results_dir=" + dir + " train.checkpoint_every=4 --quiet");
    REQUIRE(r.code == 0);
    require_same_outcome(outcome_of(run), want);
    fs::remove_all(dir);
    fs::remove_all(ref_dir);
}

// A file that cannot be written (here: over the file-size limit, `ulimit -f`, which fails a write with
// EFBIG the way a full disk fails it with ENOSPC) is the machine, not the input: exit code 1, one line
// "cannot write files", no half-written checkpoint (last.tmp) and no results.json. It used to be exit code
// 2, as for bad input, with a partial last.tmp left behind.
TEST_CASE("reliability/a_file_that_cannot_be_written_exits_1_and_leaves_nothing_half_written", "[reliability][disk]") {
    const std::string dir = fresh_dir("fsize");
    const std::string cmd = "cd '" + kSrc + "' && bash -c \"trap '' XFSZ; ulimit -f 2; exec timeout -k 5 60 " + kBin +
                            " run " + kTinyRun + " results_dir=" + dir + " model.d_ff=64 --quiet\" 2>&1";
    std::string out;
    FILE* p = popen(cmd.c_str(), "r");
    char buf[4096];
    while (p && fgets(buf, sizeof buf, p)) out += buf;
    const int st = pclose(p);
    const int code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    INFO(out);
    CHECK(code == 1);
    // The progress messages came before; the error is the last line, and the only one of its kind.
    const auto from = out.rfind('\n', out.size() >= 2 ? out.size() - 2 : 0);
    const std::string last = out.substr(from == std::string::npos ? 0 : from + 1);
    CHECK_THAT(last, Catch::StartsWith("error: cannot write files: ") && Catch::Contains("disk full?"));
    CHECK_THAT(out, !Catch::Contains("internal error"));
    CHECK(out.find("error: ") == out.rfind("error: "));
    const fs::path run = fs::path(dir) / "tiny_run/runs/seed=1";
    CHECK_FALSE(fs::exists(run / "checkpoints/last.tmp"));
    CHECK_FALSE(fs::exists(run / "results.json"));
    CHECK_FALSE(fs::exists(run / "results.json.tmp"));
    fs::remove_all(dir);
}

// ================================================================ numerical faults

TEST_CASE("reliability/report_names_a_broken_results_file", "[reliability][report]") {
    // An empty, scalar, list or mistyped results.json used to end `relpos report` in "internal error:
    // bad conversion"; each is one sentence naming the file, exit code 2.
    const std::string dir = fresh_dir("broken_results");
    fs::copy(std::string(RELPOS_SOURCE_DIR) + "/tests/fixtures/runs", dir, fs::copy_options::recursive);
    const fs::path bad = fs::path(dir) / "fixture_k/runs/k=0_seed=1/results.json";
    for (const std::string text : {"", "42\n", "[1, 2]\n", "{\"labels\": {}}\n", "{\"id\": \"a\", \"metrics\": [1]}\n",
                                   "{\"id\": \"a\", \"metrics\": {\"m\": \"high\"}}\n"}) {
        INFO(text);
        std::ofstream(bad) << text;
        const Result r = relpos("report " + dir + "/fixture_k");
        CHECK(r.code == 2);
        CHECK_THAT(r.err, Catch::Contains(bad.string()) && !Catch::Contains("internal error"));
    }
    fs::remove_all(dir);
}

namespace {
bool have_gnuplot() { return std::system("command -v gnuplot > /dev/null 2>&1") == 0; }
}  // namespace

TEST_CASE("reliability/report_with_a_broken_metrics_file_writes_nothing", "[reliability][report]") {
    // A metrics.jsonl line that is not JSON used to end `relpos report` in exit code 2 after report.md,
    // report.csv, report.json and some plots had been written: everything is now read first.
    if (!have_gnuplot()) {
        WARN("gnuplot is not installed: the report draws no plots and reads no metrics.jsonl; skipped");
        return;
    }
    const std::string dir = fresh_dir("report-metrics");
    fs::copy(kSrc + "/tests/fixtures/runs", dir, fs::copy_options::recursive);
    const fs::path exp = fs::path(dir) / "fixture_k";
    const fs::path metrics = exp / "runs/k=16_seed=2/metrics.jsonl";  // the runs are read in order: not the first
    spit(metrics, "{\"step\": 1, \"epoch\": 1, \"train_loss\": 5.0}\n{\"step\": 10, \"valid_loss\": oops}\n");
    const Snapshot before = snapshot(exp);
    const Result r = relpos("report " + exp.string());
    expect_error(Case{"metrics.jsonl not JSON", "report", {metrics.string() + " line 2", "not valid JSON"}}, r);
    CHECK(snapshot(exp) == before);  // no report.*, no .tmp, no plots/
    CHECK(r.out.empty());
    // Lines that are no loss lines at all are passed over; the learning curves are drawn without that run's
    // (before: "internal error: gnuplot failed", since no run had a training loss left to draw).
    spit(metrics, "garbage\n");
    const Result g = relpos("report " + exp.string());
    INFO(g.err);
    CHECK(g.code == 0);
    CHECK(fs::file_size(exp / "plots/learning_curves.png") > 0);
    fs::remove_all(dir);
}

TEST_CASE("reliability/report_output_path_in_the_way_is_one_sentence", "[reliability][report]") {
    // A directory named report.md, or a file named plots, used to end `relpos report` in exit code 1 with
    // "cannot read or write files: filesystem error: cannot rename: Is a directory" (or "cannot create
    // directories: Not a directory"), leaving report.md.tmp behind.
    const std::string dir = fresh_dir("report-paths");
    fs::copy(kSrc + "/tests/fixtures/runs", dir, fs::copy_options::recursive);
    const fs::path exp = fs::path(dir) / "fixture_k";
    struct PathCase {
        std::string name;
        std::function<void()> block, unblock;
        std::vector<std::string> fragments;
        bool needs_gnuplot;
    };
    const std::vector<PathCase> cases = {
        {"report.md is a directory", [&] { fs::create_directories(exp / "report.md/x"); },
         [&] { fs::remove_all(exp / "report.md"); },
         {(exp / "report.md").string() + " is a directory where relpos report writes its Markdown table (a file)",
          "move it away"},
         false},
        {"report.json.tmp is a directory", [&] { fs::create_directories(exp / "report.json.tmp"); },
         [&] { fs::remove_all(exp / "report.json.tmp"); }, {(exp / "report.json.tmp").string() + " is a directory"}, false},
        {"plots is a file", [&] { spit(exp / "plots", "x\n"); }, [&] { fs::remove(exp / "plots"); },
         {(exp / "plots").string() + " is a file where relpos report writes the plots (a directory)", "move it away"},
         true},
    };
    for (const auto& c : cases) {
        if (c.needs_gnuplot && !have_gnuplot()) {
            WARN(c.name << ": gnuplot is not installed, so the report writes no plots; skipped");
            continue;
        }
        c.block();
        const Snapshot before = snapshot(exp);
        const Result r = relpos("report " + exp.string());
        expect_error(Case{c.name, "report", c.fragments}, r);
        INFO(c.name);
        CHECK(snapshot(exp) == before);  // none of the tables, no .tmp, no plots
        c.unblock();
    }
    const Result ok = relpos("report " + exp.string());
    CHECK(ok.code == 0);
    for (const char* f : {"report.md", "report.csv", "report.json"}) {
        CHECK(fs::is_regular_file(exp / f));
        CHECK_FALSE(fs::exists(exp / (std::string(f) + ".tmp")));
    }
    fs::remove_all(dir);
}

TEST_CASE("reliability/diverging_loss_exits_3_like_a_nonfinite_one", "[reliability][nonfinite]") {
    // lr = 1e6: the loss explodes to finite values far above ln(vocabulary) (it used to reach 5e10 and
    // finish with exit code 0). It stops like a non-finite loss, naming the bound and what to change.
    const std::string dir = fresh_dir("diverge");
    const Result r = relpos("run " + kTinyCopy + " results_dir=" + dir + " train.lr=1e6 --quiet");
    INFO(r.err);
    REQUIRE(r.code == 3);
    CHECK_THAT(r.err, Catch::Contains("training stopped at step") && Catch::Contains("training diverged") &&
                          Catch::Contains("10 x ln(vocabulary)") && Catch::Contains("train.lr"));
    CHECK_FALSE(fs::exists(fs::path(dir) / "tiny_copy/runs/seed=3/results.json"));
    fs::remove_all(dir);
}

TEST_CASE("reliability/overflowing_loss_exits_3_and_keeps_the_checkpoint", "[reliability][nonfinite]") {
    // lr = 1e30: the first Adam step moves every weight by ~1e27, so the second forward pass overflows
    // float32. A checkpoint after every step shows that the last good one (step 1) is kept.
    const std::string dir = fresh_dir("overflow");
    const fs::path run = fs::path(dir) / "tiny_copy/runs/seed=3";
    const std::string args = "run " + kTinyCopy + " results_dir=" + dir + " train.lr=1e30 train.checkpoint_every=1 --quiet";
    const Result r = relpos(args);
    INFO(r.err);
    REQUIRE(r.code == 3);
    CHECK_THAT(r.err, Catch::Contains("training stopped at step 2") && Catch::Contains("nan") &&
                          Catch::Contains("the last good checkpoint (step 1) is kept") &&
                          Catch::Contains("train.on_nonfinite"));
    CHECK_THAT(r.err, !Catch::Contains("internal error"));
    const YAML::Node st = YAML::LoadFile((run / "checkpoints/last/state.json").string());
    CHECK(st["step"].as<int>() == 1);
    CHECK_FALSE(fs::exists(run / "results.json"));
    // Running it again resumes from that checkpoint and stops the same way: nothing is lost or redone.
    const Snapshot ck = snapshot(run / "checkpoints");
    const Result again = relpos(args);
    CHECK(again.code == 3);
    CHECK_THAT(again.err, Catch::Contains("training stopped at step 2"));
    CHECK(snapshot(run / "checkpoints") == ck);
    fs::remove_all(dir);
}
