// Values that cannot work are refused before anything is created: one sentence naming the file or override,
// the key and what is allowed, exit code 2, no results directory, and a run's own directory unchanged by
// `relpos eval`. One TEST_CASE per case; each fails if the value is accepted again (the run would then train,
// write its directory, or fail late with another message).
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "experiments/config/task_schema.hpp"
#include "experiments/data/corpus.hpp"
#include "tests/cli_helpers.hpp"

#include <catch2/catch.hpp>

namespace fs = std::filesystem;

namespace {

const std::string kBin = std::string(RELPOS_BINARY_DIR) + "/relpos";
const std::string kEncoderOnly = std::string(RELPOS_SOURCE_DIR) + "/tests/fixtures/tiny_encoder_only.yaml";

using relpos::test::Cmd;
using relpos::test::sh;

fs::path scratch(const std::string& what) {
    const fs::path p = fs::temp_directory_path() / ("relpos-refusals-" + what + "-" + std::to_string(getpid()));
    fs::remove_all(p);
    return p;
}

// `relpos run CONFIG results_dir=<fresh> OVERRIDES`: exit 2, one line "error: ...", each fragment, nothing
// written (the results directory does not exist afterwards).
void expect_refused(const std::string& config, const std::vector<std::string>& overrides,
                    const std::vector<std::string>& fragments) {
    const fs::path out = scratch("run");
    std::string cmd = kBin + " run " + config + " results_dir=" + out.string();
    for (const auto& o : overrides) cmd += " '" + o + "'";
    const Cmd r = sh(cmd);
    INFO(cmd << "\n" << r.out);
    CHECK(r.code == 2);
    CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 1);
    CHECK_THAT(r.out, Catch::StartsWith("error: "));
    for (const auto& f : fragments) CHECK_THAT(r.out, Catch::Contains(f));
    CHECK_FALSE(fs::exists(out));
    fs::remove_all(out);
}

// Every file under `dir` with its size and modification time: what "unchanged" compares.
std::string listing(const fs::path& dir) {
    std::ostringstream s;
    std::vector<std::string> lines;
    for (const auto& e : fs::recursive_directory_iterator(dir)) {
        std::error_code ec;
        const auto size = e.is_regular_file(ec) ? e.file_size(ec) : 0;
        lines.push_back(fs::relative(e.path(), dir).string() + " " + std::to_string(size) + " " +
                        std::to_string(fs::last_write_time(e.path(), ec).time_since_epoch().count()));
    }
    std::sort(lines.begin(), lines.end());
    for (const auto& l : lines) s << l << "\n";
    return s.str();
}

// One trained tiny run (encoder-only reverse, a second of training) for the `relpos eval --run` cases.
const fs::path& trained_run() {
    static const fs::path run = [] {
        const fs::path out = scratch("eval");
        const Cmd r = sh(kBin + " run " + kEncoderOnly + " results_dir=" + out.string() + " --quiet");
        INFO(r.out);
        REQUIRE(r.code == 0);
        return out / "tiny_encoder_only" / "runs" / "seed=3";
    }();
    return run;
}

// `relpos eval --run RUN --split test OVERRIDE`: exit 2, one line, the fragments, the run directory unchanged.
void expect_eval_refused(const std::string& override_text, const std::vector<std::string>& fragments) {
    const fs::path& run = trained_run();
    const std::string before = listing(run);
    const std::string cmd = kBin + " eval --run " + run.string() + " --split test '" + override_text + "'";
    const Cmd r = sh(cmd);
    INFO(cmd << "\n" << r.out);
    CHECK(r.code == 2);
    CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 1);
    CHECK_THAT(r.out, Catch::StartsWith("error: "));
    for (const auto& f : fragments) CHECK_THAT(r.out, Catch::Contains(f));
    CHECK(listing(run) == before);
}

}  // namespace

// ---- test lengths and integers: a documented bound, and 64 bits

TEST_CASE("refusals/test_len beyond the documented bound", "[cli][errors][refusals]") {
    expect_refused(kEncoderOnly, {"data.synthetic.test_len=[41, 100000000]"},
                   {"command-line override", "data.synthetic.test_len[1]", "<= 100000", "100000000"});
    expect_eval_refused("data.synthetic.test_len=[41, 100000000]",
                        {"command-line override", "data.synthetic.test_len[1]", "<= 100000"});
}

TEST_CASE("refusals/an integer beyond 64 bits", "[cli][errors][refusals]") {
    expect_refused(kEncoderOnly, {"data.synthetic.test_len=[41, 99999999999999999999]"},
                   {"data.synthetic.test_len[1]", "99999999999999999999"});
    expect_eval_refused("data.synthetic.test_len=[41, 99999999999999999999]",
                        {"data.synthetic.test_len[1]", "99999999999999999999"});
    expect_refused(kEncoderOnly, {"data.synthetic.test_size=99999999999999999999"},
                   {"data.synthetic.test_size", "must be an integer"});
}

// ---- memory: what generating the data and evaluating the longest sequence need, before either starts

TEST_CASE("refusals/evaluation that cannot fit in memory names the length to lower", "[cli][errors][refusals]") {
    // 2 heads x (2 x 100000 + 3)^2 scores and weights: 640 GB of attention for one layer
    expect_refused(kEncoderOnly, {"data.synthetic.test_len=[41, 100000]"},
                   {"command-line override", "data.synthetic.test_len:", "GiB", "lower its maximum"});
    expect_eval_refused("data.synthetic.test_len=[41, 100000]",
                        {"command-line override", "data.synthetic.test_len:", "GiB", "lower its maximum"});
}

TEST_CASE("refusals/data generation that cannot fit in memory names the size to lower", "[cli][errors][refusals]") {
    expect_refused(kEncoderOnly, {"data.synthetic.test_size=100000000000"},
                   {"command-line override", "data.synthetic.test_size:", "generating the examples", "GiB"});
    expect_eval_refused("data.synthetic.test_size=100000000000",
                        {"data.synthetic.test_size:", "generating the examples", "GiB"});
}

TEST_CASE("refusals/a training batch that cannot fit in memory names train.batch_tokens", "[cli][errors][refusals]") {
    // 100 million training examples of up to 13 tokens, all in one batch: about a terabyte of activations
    expect_refused(kEncoderOnly, {"data.synthetic.train_size=100000000", "train.batch_tokens=1000000000000"},
                   {"command-line override 'train.batch_tokens=1000000000000'", "train.batch_tokens:",
                    "activations the backward keeps", "GiB", "lower it"});
    // the same batch size over the fixture's 300 examples: bounded by them, refused by nothing
    const fs::path out = scratch("big-batch");
    const Cmd r = sh(kBin + " run " + kEncoderOnly + " --list results_dir=" + out.string() +
                     " train.batch_tokens=1000000000000");
    INFO(r.out);
    CHECK(r.code == 0);
    fs::remove_all(out);
}

TEST_CASE("refusals/a model too large for memory is named at the key furthest above its default", "[cli][errors][refusals]") {
    // d_ff 10^12: 2 x 64 x 10^12 parameters a layer; the override is named, and d_ff, not d_model
    expect_refused(kEncoderOnly, {"model.d_ff=1000000000000"},
                   {"command-line override 'model.d_ff=1000000000000'", "model.d_ff:", "parameters in its layers", "GiB",
                    "lower it"});
    // a large model that fits is not refused (d_model 1024: about 100 million parameters a layer at most)
    const fs::path out = scratch("big-model");
    const Cmd r = sh(kBin + " run " + kEncoderOnly + " --list results_dir=" + out.string() + " model.d_model=1024 model.heads=8");
    INFO(r.out);
    CHECK(r.code == 0);
    fs::remove_all(out);
}

// ---- randomized positions: the range against the sequences it draws for

TEST_CASE("refusals/a randomized range shorter than the training sequences", "[cli][errors][refusals]") {
    // encoder-only reverse of 2-5 symbols: inputs BOS x SEP slots EOS of up to 2 x 5 + 3 = 13 tokens
    expect_refused(kEncoderOnly, {"model.position={type: shaw, k: 4, randomized: 3}"},
                   {"command-line override", "model.position.randomized", "[0, 3)", "training sequence has 13 tokens",
                    "at least 13"});
}

TEST_CASE("refusals/a randomized range shorter than a test split it samples positions for", "[cli][errors][refusals]") {
    // trains (13 <= 14), but the test split's 6-8 symbols make inputs of up to 19 tokens, drawn at evaluation
    expect_refused(kEncoderOnly, {"model.position={type: shaw, k: 4, randomized: 14, randomized_eval: sample_by_length}"},
                   {"model.position.randomized", "[0, 14)", "'test' sequence has 19 tokens", "at least 19",
                    "randomized_eval: identity"});
}

TEST_CASE("refusals/a randomized range is enough when evaluation reads positions 0, 1, 2, ...", "[cli][refusals][e2e]") {
    // The same range with randomized_eval: identity: evaluation draws nothing, the longer test split is scored.
    const fs::path out = scratch("identity");
    const Cmd r = sh(kBin + " run " + kEncoderOnly + " results_dir=" + out.string() +
                     " 'model.position={type: shaw, k: 4, randomized: 14}' --quiet");
    INFO(r.out);
    CHECK(r.code == 0);
    CHECK(fs::exists(out / "tiny_encoder_only" / "runs" / "seed=3" / "results.json"));
    fs::remove_all(out);
}

// ---- competence targets against the metric's range

TEST_CASE("refusals/a target above what a percentage reaches", "[cli][errors][refusals]") {
    expect_refused(kEncoderOnly, {"train.stop={target_metric: accuracy, target: 150}"},
                   {"train.stop.target", "[0, 100]", "accuracy", "150"});
}

TEST_CASE("refusals/a target below what a percentage can be (any model reaches it)", "[cli][errors][refusals]") {
    expect_refused(kEncoderOnly, {"train.stop={target_metric: token_accuracy, target: -5}"},
                   {"train.stop.target", "[0, 100]", "token_accuracy", "-5"});
}

// ---- the same encoding twice, the same run twice

TEST_CASE("refusals/a model given the same encoding twice", "[cli][errors][refusals]") {
    expect_refused(kEncoderOnly, {"model.position=[{type: shaw, k: 2}, {type: shaw, k: 2}]"},
                   {"model.position[1]", "is the encoding of model.position[0] again"});
    // the same once the defaults are filled in
    expect_refused(kEncoderOnly, {"model.position=[{type: shaw, k: 2}, {type: shaw, k: 2, keys: true}]"},
                   {"model.position[1]", "is the encoding of model.position[0] again"});
}

TEST_CASE("refusals/two sweep points that are one run", "[cli][errors][refusals]") {
    expect_refused(kEncoderOnly, {"sweep.grid.model.position=[{type: shaw, k: 2}, {type: shaw, k: 2, keys: true}]"},
                   {"sweep: the points", "position=type-shaw-k-2_seed=3", "position=type-shaw-k-2-keys-true_seed=3",
                    "are the same run"});
    // (a value written twice is refused by the grid itself, naming its line)
    expect_refused(kEncoderOnly, {"sweep.grid.model.position=[{type: shaw, k: 2}, {type: shaw, k: 2}]"},
                   {"sweep.grid.model.position[1]", "repeats the value"});
}

// ---- line endings named

TEST_CASE("refusals/carriage-return-only and mixed line endings are named", "[data][errors][refusals]") {
    const fs::path dir = scratch("endings");
    fs::create_directories(dir);
    auto write = [&](const std::string& name, const std::string& bytes) {
        std::ofstream(dir / name, std::ios::binary) << bytes;
        return (dir / name).string();
    };
    const std::string cr = write("cr.txt", "ein satz\rnoch einer\rder dritte\r");
    CHECK_THROWS_WITH(relpos::read_lines(cr), Catch::Contains(cr + " has carriage-return-only (CR, classic Mac) line "
                                                                   "endings") &&
                                                  Catch::Contains("convert them to LF"));
    const std::string mixed = write("mixed.txt", "eins\nzwei\rdrei\r\nvier\n");
    CHECK_THROWS_WITH(relpos::read_lines(mixed),
                      Catch::Contains(mixed + " has mixed line endings: line 2 ends in a lone carriage return"));
    // LF, CRLF, and the two mixed, stay lines
    const std::string ok = write("ok.txt", "eins\r\nzwei\ndrei\r\n");
    CHECK(relpos::read_lines(ok) == std::vector<std::string>{"eins", "zwei", "drei"});
    // stdin (relpos translate, relpos normalize): the same, one sentence and exit 2
    for (const char* input : {"ein satz\\rnoch einer\\r", "eins\\rzwei\\ndrei\\n"}) {
        const Cmd r = sh(std::string("printf '") + input + "' | " + kBin + " normalize --lang de");
        INFO(input << "\n" << r.out);
        CHECK(r.code == 2);
        CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 1);
        CHECK_THAT(r.out, Catch::Contains("holds a carriage return (CR) before its end") &&
                              Catch::Contains("carriage-return-only or mixed line endings"));
    }
    fs::remove_all(dir);
}

// ---- `relpos run --list` refuses what `relpos run` refuses; empty patterns; eval's --out never destroys an input

TEST_CASE("refusals/--list of a changed config with a finished run is refused as the run is", "[cli][errors][refusals]") {
    const fs::path exp = trained_run().parent_path().parent_path();  // results_dir/tiny_encoder_only
    const std::string results_dir = exp.parent_path().string();
    const std::string before = listing(exp);
    for (const std::string& extra : {std::string(" train.lr=0.123"), std::string(" data.task=revers"),
                                     std::string(" eval.metrics=[bleu]")}) {
        const std::string cmd = kBin + " run " + kEncoderOnly + " results_dir=" + results_dir + extra + " --list";
        const Cmd r = sh(cmd);
        INFO(cmd << "\n" << r.out);
        CHECK(r.code == 2);
        CHECK_THAT(r.out, Catch::Contains("error: "));
        CHECK_THAT(r.out, !Catch::Contains("the study is complete"));
    }
    CHECK_THAT(sh(kBin + " run " + kEncoderOnly + " results_dir=" + results_dir + " train.lr=0.123 --list").out,
               Catch::Contains("already finished with a different configuration"));
    CHECK_THAT(sh(kBin + " run " + kEncoderOnly + " results_dir=" + results_dir + " data.task=revers --list").out,
               Catch::Contains("did you mean 'reverse'"));
    CHECK(listing(exp) == before);
    // the same config lists its finished run, exit 0
    const Cmd same = sh(kBin + " run " + kEncoderOnly + " results_dir=" + results_dir + " --list");
    INFO(same.out);
    CHECK(same.code == 0);
    CHECK_THAT(same.out, Catch::Contains("[finished]"));
}

TEST_CASE("refusals/an empty --only or --runs pattern", "[cli][errors][refusals]") {
    const fs::path out = scratch("only");
    const Cmd r = sh(kBin + " run " + kEncoderOnly + " results_dir=" + out.string() + " --only ''");
    INFO(r.out);
    CHECK(r.code == 2);
    CHECK_THAT(r.out, Catch::Contains("--only is empty"));
    CHECK_FALSE(fs::exists(out));
    const Cmd e = sh(kBin + " eval --config " + kEncoderOnly + " results_dir=" + out.string() +
                     " --split test --runs '' --out " + (out / "eval").string());
    INFO(e.out);
    CHECK(e.code == 2);
    CHECK_THAT(e.out, Catch::Contains("--runs is empty"));
    CHECK_FALSE(fs::exists(out));
}

TEST_CASE("refusals/eval --out onto its own --src, or among an experiment's runs", "[cli][errors][refusals]") {
    const fs::path& run = trained_run();
    const fs::path dir = scratch("evalout");
    fs::create_directories(dir);
    const fs::path src = dir / "src.txt", ref = dir / "ref.txt";
    std::ofstream(src) << "4 5\n6 7\n";
    std::ofstream(ref) << "5 4\n7 6\n";
    for (const auto& target : {src, ref}) {
        const std::string cmd = kBin + " eval --run " + run.string() + " --src " + src.string() + " --ref " +
                                ref.string() + " --out " + target.string();
        const Cmd r = sh(cmd);
        INFO(cmd << "\n" << r.out);
        CHECK(r.code == 2);
        CHECK_THAT(r.out, Catch::Contains("would destroy it"));
    }
    std::ifstream in(src);
    std::string first;
    std::getline(in, first);
    CHECK(first == "4 5");  // the input is intact
    const fs::path exp = run.parent_path().parent_path();
    const std::string before = listing(exp);
    for (const auto& target : {run, run / "scores"}) {  // a finished run, or a directory inside one
        const std::string cmd = kBin + " eval --config " + kEncoderOnly + " results_dir=" + exp.parent_path().string() +
                                " --split test --out " + target.string();
        const Cmd r = sh(cmd);
        INFO(cmd << "\n" << r.out);
        CHECK(r.code == 2);
        CHECK_THAT(r.out, Catch::Contains("among the experiment's runs"));
    }
    CHECK(listing(exp) == before);
    fs::remove_all(dir);
}

TEST_CASE("refusals/an empty or repeated list of metrics or splits", "[cli][errors][refusals]") {
    expect_refused(kEncoderOnly, {"eval.metrics=[]"}, {"command-line override", "eval.metrics", "at least one metric"});
    expect_refused(kEncoderOnly, {"eval.splits=[]"}, {"command-line override", "eval.splits", "at least one split"});
    expect_refused(kEncoderOnly, {"eval.metrics=[accuracy, accuracy]"},
                   {"eval.metrics[1]", "'accuracy' is already eval.metrics[0]"});
    expect_refused(kEncoderOnly, {"data.test_splits=[test, test]"}, {"data.test_splits[1]", "already"});
}

TEST_CASE("refusals/a run store that is a file", "[cli][errors][refusals]") {
    // named as run_store, before the experiment's own directory is made (it was named results_dir, after)
    expect_refused(kEncoderOnly, {"run_store=" + kEncoderOnly}, {"run_store: cannot create", "is a file, not a directory"});
}

TEST_CASE("refusals/an unknown task is named at its line or override", "[cli][errors][refusals]") {
    expect_refused(kEncoderOnly, {"data.task=revers"},
                   {"command-line override 'data.task=revers'", "not a registered task", "did you mean 'reverse'"});
}

TEST_CASE("refusals/a data key the task does not read", "[cli][errors][refusals]") {
    // data.lm is read by language models only, data.dir by the tasks that read files: set on a synthetic task
    // they changed nothing, silently
    expect_refused(kEncoderOnly, {"data.lm.context=128"},
                   {"data.lm.context: task 'reverse' does not read it", "synthetic.n_symbols", "relpos list"});
    expect_refused(kEncoderOnly, {"data.dir=data/elsewhere"}, {"data.dir: task 'reverse' does not read it"});
    // the translation corpus's keys: languages, subwords, length filter
    expect_refused(kEncoderOnly, {"data.src=en", "data.tgt=de"}, {"data.src: task 'reverse' does not read it"});
    expect_refused(kEncoderOnly, {"data.vocab_size=4000"}, {"data.vocab_size: task 'reverse' does not read it"});
    expect_refused(kEncoderOnly, {"data.max_train_examples=10"},
                   {"data.max_train_examples: task 'reverse' does not read it"});
    // and data.synthetic on the language model, named at its line in the file
    const fs::path dir = scratch("unread-key");
    fs::create_directories(dir);
    const fs::path cfg = dir / "lm.yaml";
    std::ofstream(cfg) << "name: lm_unread\ndata:\n  task: brown\n  synthetic: {n_symbols: 4}\n"
                          "model: {family: decoder_only, d_model: 16, heads: 2, d_ff: 32, decoder_layers: 1}\n";
    expect_refused(cfg.string(), {"data.dir=" + dir.string()},
                   {"lm.yaml:4:", "data.synthetic.n_symbols: task 'brown' does not read it", "lm.context"});
    // the language model reads the subword keys but not the translation corpus's length filter
    std::ofstream(cfg) << "name: lm_unread\ndata:\n  task: brown\n  vocab_size: 4000\n  max_len: 50\n"
                          "model: {family: decoder_only, d_model: 16, heads: 2, d_ff: 32, decoder_layers: 1}\n";
    expect_refused(cfg.string(), {"data.dir=" + dir.string()},
                   {"lm.yaml:5:", "data.max_len: task 'brown' does not read it", "vocab_size"});
    fs::remove_all(dir);
}

TEST_CASE("refusals/keys a task does not read pass at their defaults (written-out run configs have them)",
          "[cli][refusals]") {
    const fs::path out = scratch("unread-default");
    const Cmd r = sh(kBin + " run " + kEncoderOnly + " --list results_dir=" + out.string() +
                     " data.lm.context=64 data.dir=" + relpos::default_data_dir() +
                     " data.src=de data.tokenized=true data.max_len=100 data.synthetic.n_symbols=2");
    REQUIRE_FALSE(relpos::default_data_dir().empty());
    INFO(r.out);
    CHECK(r.code == 0);
    fs::remove_all(out);
}

TEST_CASE("refusals/a model too large for memory names the layers its family builds", "[cli][errors][refusals]") {
    // the encoder-only fixture builds no decoder: its layers are the encoder's, and they are the key to lower
    expect_refused(kEncoderOnly, {"model.encoder_layers=100000000"},
                   {"model.encoder_layers:", "100000000 encoder layers", "GiB to train",
                    "the sizes that count: model.d_model, model.d_ff, model.encoder_layers)"});
}
