// The task seam and the decoder-only family: the registry and its errors, a task registered by a test and
// run end to end, decoder-only batches, incremental decoding equal to the full causal pass for every
// encoding, a gradient check of a whole decoder-only model, the language-model windows, and the task's
// own data defaults. (The names of finished runs: test_run_naming.cpp.)
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <unistd.h>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "experiments/data/batching.hpp"
#include "experiments/eval/decode.hpp"
#include "experiments/run/experiment.hpp"
#include "experiments/run/sweep.hpp"
#include "experiments/tasks/task.hpp"
#include "experiments/train/trainer.hpp"
#include "nn/position.hpp"
#include "tests/cli_helpers.hpp"
#include "tests/nn_helpers.hpp"

using namespace relpos;
using namespace relpos::test;
namespace fs = std::filesystem;
using V = Var<double>;

namespace relpos {
std::vector<Example> stream_windows(const std::vector<std::int32_t>& t, std::size_t length, std::size_t stride);
std::vector<std::pair<double, std::size_t>> loss_by_position(const nn::Transformer<float>& model,
                                                             const std::vector<Example>& windows,
                                                             std::size_t batch_tokens, std::size_t N);
}

namespace {

const std::string kSrc = std::string(RELPOS_SOURCE_DIR);

std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const std::exception& e) {
        return e.what();
    }
    return "";
}

std::string write_config(const std::string& name, const std::string& text) {
    const fs::path d = fs::temp_directory_path() / ("relpos-tasks-" + std::to_string(getpid()));
    fs::create_directories(d);
    const fs::path p = d / name;
    std::ofstream(p) << text;
    return p.string();
}

// Trains the experiment at `cfg` quietly (it must succeed) and reads the results.json of its run `run`
// (results_dir/<name>/runs/<id>).
YAML::Node run_and_read(const std::string& cfg, const fs::path& run) {
    RunOptions opt;
    opt.quiet = true;
    REQUIRE(run_experiment(cfg, {}, opt) == 0);
    return YAML::LoadFile((run / "results.json").string());
}

}  // namespace

TEST_CASE("tasks/registry lists every task with its families and metrics", "[tasks]") {
    std::set<std::string> names;
    for (const auto& e : task_registry().entries()) {
        names.insert(e.name);
        REQUIRE(!e.families.empty());
        for (auto f : e.families) CHECK(!e.metrics.at(f).empty());
    }
    for (const char* n : {"multi30k", "copy", "reverse", "local_sum", "swap_pairs", "brown", "sort", "parity", "addition",
                          "duplicate_string", "binary_addition", "modular_arithmetic", "missing_duplicate",
                          "stack_manipulation", "even_pairs", "bucket_sort"})
        CHECK(names.count(n) == 1);
    // copy and reverse exist in both families, one entry each
    const TaskEntry* copy = task_registry().find("copy");
    REQUIRE(copy);
    CHECK(copy->families.size() == 3);  // encoder_decoder, decoder_only, encoder_only
}

TEST_CASE("tasks/every metric a registered task computes can be asked for in eval.metrics", "[tasks][config]") {
    // Driven by the registry: a metric a task declares (TaskEntry::metrics) and the config layer refuses could
    // never be computed (loss_by_position was refused until 2026-11-26).
    LoadFlags flags;
    flags.check_paths = false;  // the data of multi30k and brown need not be installed to read a config
    std::size_t checked = 0;
    for (const auto& e : task_registry().entries())
        for (const auto& [family, metrics] : e.metrics)
            for (const auto& m : metrics) {
                INFO(e.name << " " << nn::family_name(family) << " " << m);
                const std::string path = write_config("metric.yaml", fmt::format(
                    "name: t\ndata: {{task: {}}}\nmodel: {{family: {}}}\neval: {{metrics: [{}]}}\n", e.name,
                    nn::family_name(family), m));
                const std::string err = error_of([&] { load_config(path, {}, flags); });
                CHECK(err.find("eval.metrics") == std::string::npos);
                ++checked;
            }
    CHECK(checked > 40);
}

TEST_CASE("tasks/make_task names the file and key of what does not fit", "[tasks]") {
    const std::string base = "name: t\ndata: {task: TASK, valid_split: val, test_splits: [test]}\nmodel: {family: FAMILY}\n";
    auto cfg = [&](const std::string& task, const std::string& family, const std::string& extra = "") {
        std::string s = base;
        s.replace(s.find("TASK"), 4, task);
        s.replace(s.find("FAMILY"), 6, family);
        return load_config(write_config("c.yaml", s + extra));
    };
    CHECK_THAT(error_of([&] { make_task(cfg("copyy", "encoder_decoder")); }),
               Catch::Contains("data.task: 'copyy' is not a registered task (did you mean 'copy'?)"));
    CHECK_THAT(error_of([&] { make_task(cfg("parity", "encoder_decoder")); }),
               Catch::Contains("model.family: task 'parity' trains decoder_only or encoder_only models, not encoder_decoder; "
                               "set model.family: decoder_only"));
    CHECK_THAT(error_of([&] { make_task(cfg("copy", "decoder_only", "eval: {metrics: [bleu]}\n")); }),
               Catch::Contains("eval.metrics: task 'copy' (decoder_only) does not compute 'bleu'"));
    CHECK_THAT(error_of([&] { make_task(cfg("copy", "decoder_only", "train: {valid_bleu: true}\n")); }),
               Catch::Contains("train.valid_bleu"));
    CHECK_THAT(error_of([&] { make_task(cfg("copy", "decoder_only", "eval: {split_metrics: {test: [accuracy, ppl_sliding]}}\n")); }),
               Catch::Contains("eval.split_metrics.test: task 'copy' (decoder_only) does not compute 'ppl_sliding'"));
    CHECK(error_of([&] { make_task(cfg("copy", "decoder_only")); }).empty());  // default metrics fit the task
}

TEST_CASE("tasks/eval.split_metrics: a split computes its own metrics, the others eval.metrics", "[tasks][e2e]") {
    // Through the runner: results.json holds val.accuracy and no other val metric, and test every eval.metrics one.
    const fs::path results = fs::temp_directory_path() / ("relpos-tasks-split-metrics-" + std::to_string(getpid()));
    fs::remove_all(results);
    const std::string cfg = write_config(
        "split_metrics.yaml",
        "name: sm\nresults_dir: " + results.string() +
            "\nseed: 3\nthreads: 1\ndata: {task: copy, valid_split: val, test_splits: [test],\n"
            "  synthetic: {n_symbols: 6, train_size: 40, valid_size: 10, test_size: 10, train_len: [2, 4], test_len: [5, 6]}}\n"
            "model: {family: decoder_only, d_model: 16, heads: 2, d_ff: 32, decoder_layers: 1, position: {type: rope}}\n"
            "train: {epochs: 1, batch_tokens: 64, lr: 0.5, warmup: 4}\n"
            "eval: {metrics: [accuracy, token_accuracy, loss], split_metrics: {val: [accuracy]}}\n");
    const fs::path run = results / "sm" / "runs" / "seed=3";
    const YAML::Node m = run_and_read(cfg, run)["metrics"];
    std::set<std::string> val, test;  // metric names, without their @<length>
    for (const auto& kv : m) {
        const std::string k = kv.first.as<std::string>();
        const std::string base = k.substr(0, k.find('@'));
        if (base.rfind("val.", 0) == 0) val.insert(base.substr(4));
        if (base.rfind("test.", 0) == 0) test.insert(base.substr(5));
    }
    CHECK(val == std::set<std::string>{"accuracy"});
    CHECK(test == std::set<std::string>{"accuracy", "token_accuracy", "loss"});
    // written back into the run's config (so into its hash) because it was given
    CHECK(YAML::LoadFile((run / "config.yaml").string())["eval"]["split_metrics"]["val"][0].as<std::string>() == "accuracy");
    fs::remove_all(results);
}

// A task defined here, registered with one line, and run through `relpos run`'s code path unchanged:
// the proof that a task is one file and one registration line.
namespace {
class CountTask : public Task {  // decoder-only: BOS x SEP -> the number of symbols of x, as one id
public:
    Dataset load(const ExperimentConfig& cfg, const std::string&, const Log&) const override {
        Dataset d;
        d.valid_split = cfg.data.valid_split;
        d.vocab = 16;
        Rng rng(7);
        auto make = [&](std::size_t n) {
            EvalSplit s;
            for (std::size_t i = 0; i < n; ++i) {
                const std::size_t len = 1 + rng.below(6);
                Example e;
                e.src.push_back(BOS_ID);
                for (std::size_t j = 0; j < len; ++j) e.src.push_back(8);
                e.src.push_back(4);
                e.tgt = {static_cast<std::int32_t>(8 + len), EOS_ID};
                s.examples.push_back(e);
            }
            return s;
        };
        d.train = make(200).examples;
        for (const auto& name : cfg.eval.splits) d.splits[name] = make(20);
        d.splits[d.valid_split] = make(20);
        return d;
    }
    std::map<std::string, double> evaluate(const EvalRequest& r) const override {
        const auto& s = r.data.splits.at(r.split);
        std::vector<std::vector<std::int32_t>> prompts;
        for (auto& e : s.examples) prompts.push_back(e.src);
        const auto out = continue_greedy(r.model, prompts, 2, EOS_ID);
        std::size_t ok = 0;
        for (std::size_t i = 0; i < out.size(); ++i) ok += out[i].size() == 1 && out[i][0] == s.examples[i].tgt[0];
        return {{"accuracy", 100.0 * double(ok) / double(out.size())}};
    }
};
}  // namespace

TEST_CASE("tasks/a task registered by a test trains and evaluates through the runner", "[tasks][e2e]") {
    TaskEntry e;
    e.name = "test_count";
    e.summary = "count the symbols of the prompt (test task)";
    e.families = {nn::Family::DecoderOnly};
    e.metrics = {{nn::Family::DecoderOnly, {"accuracy"}}};
    e.make = [](nn::Family) { return std::make_unique<CountTask>(); };
    task_registry().add(e);  // the one registration line
    const fs::path results = fs::temp_directory_path() / ("relpos-tasks-run-" + std::to_string(getpid()));
    fs::remove_all(results);
    const std::string cfg = write_config(
        "count.yaml", "name: count\nresults_dir: " + results.string() +
                          "\nthreads: 1\ndata: {task: test_count, valid_split: val, test_splits: [test]}\n"
                          "model: {family: decoder_only, d_model: 16, heads: 2, d_ff: 32, decoder_layers: 1, dropout: 0,"
                          " attention_dropout: 0, position: {type: rope}}\n"
                          "train: {epochs: 1, batch_tokens: 200, lr: 1.0, warmup: 10}\n"
                          "eval: {splits: [val, test], metrics: [accuracy]}\n");
    const YAML::Node r = run_and_read(cfg, results / "count" / "runs" / "seed=1");
    const double acc = r["metrics"]["test.accuracy"].as<double>();
    CHECK(acc >= 0.0);
    CHECK(acc <= 100.0);
    CHECK(std::fmod(acc, 5.0) == 0.0);  // the test task's own metric: right answers out of its 20 examples
    CHECK(r["steps"].as<long>() > 0);
    fs::remove_all(results);
}

TEST_CASE("tasks/decoder-only batches put context and target in one row", "[tasks][batching]") {
    std::vector<Example> ex = {{{2, 7, 8, 4}, {9, 3}}, {{2, 5, 4}, {6, 6, 3}}};
    Batch b = make_batch(ex, {0, 1}, Layout::DecoderOnly);
    REQUIRE(b.Lt == 5);
    REQUIRE(b.Ls == 0);
    // row 0: S = 2 7 8 4 9 3 -> inputs 2 7 8 4 9, outputs predicted after the context: _ _ _ 9 3
    CHECK(std::vector<std::int32_t>(b.tgt_in.begin(), b.tgt_in.begin() + 5) == std::vector<std::int32_t>{2, 7, 8, 4, 9});
    CHECK(std::vector<std::int32_t>(b.tgt_out.begin(), b.tgt_out.begin() + 5) == std::vector<std::int32_t>{0, 0, 0, 9, 3});
    // row 1: S = 2 5 4 6 6 3 -> inputs 2 5 4 6 6, outputs _ _ 6 6 3
    CHECK(std::vector<std::int32_t>(b.tgt_in.begin() + 5, b.tgt_in.end()) == std::vector<std::int32_t>{2, 5, 4, 6, 6});
    CHECK(std::vector<std::int32_t>(b.tgt_out.begin() + 5, b.tgt_out.end()) == std::vector<std::int32_t>{0, 0, 6, 6, 3});
    CHECK(b.n_tgt_tokens == 5);
    BatchOptions bo;
    bo.max_tokens = 5;  // one 5-token row per batch
    bo.layout = Layout::DecoderOnly;
    CHECK(plan_eval_batches(ex, bo).size() == 2);
}

namespace {
// Feeding a decoder-only model one token at a time through its caches gives the logits of the full causal
// pass (double, 1e-12), for a position encoding spec.
void decoder_only_incremental_equals_full(const PositionSpecs& spec) {
    INFO(spec.front().first);
    auto cfg = tiny_config(13);
    cfg.family = nn::Family::DecoderOnly;
    cfg.decoder_layers = 2;
    nn::Transformer<double> model(cfg, positions<double>(spec));
    model.eval();
    NoGradGuard ng;
    const std::size_t B = 2, L = 7;
    std::vector<std::int32_t> ids = {2, 4, 5, 6, 7, 8, 9, 2, 9, 10, 11, 12, 4, 5};
    Array<double> full = model.forward_causal(ids, B, L).value();  // (B, L, V)
    auto state = model.start_decoding();
    for (std::size_t t = 0; t < L; ++t) {
        Array<double> step = model.decode_step({ids[t], ids[L + t]}, state).value();
        for (std::size_t b = 0; b < B; ++b)
            for (std::size_t v = 0; v < 13; ++v) REQUIRE(std::abs(step(b, v) - full(b, t, v)) < 1e-12);
    }
}
}  // namespace

TEST_CASE("tasks/decoder-only incremental decoding equals the full causal pass for every encoding", "[tasks][incremental]") {
    std::size_t covered = 0;
    for (const auto& name : nn::position_registry().names()) {
        std::map<std::string, std::string> opts;
        if (name == "learned") opts["max_len"] = "16";
        if (name == "shaw") opts["k"] = "2";
        decoder_only_incremental_equals_full({{name, opts}});
        ++covered;
    }
    CHECK(covered == nn::position_registry().names().size());
    decoder_only_incremental_equals_full({{"sinusoidal", {}}, {"t5", {}}});  // two encodings at once
}

TEST_CASE("tasks/decoder-only model has no encoder and a causal decoder", "[tasks][nn]") {
    auto cfg = tiny_config(13);
    cfg.family = nn::Family::DecoderOnly;
    nn::Transformer<double> model(cfg, positions<double>({{"sinusoidal", {}}}));
    for (const auto& [name, p] : model.named_parameters()) {
        INFO(name);
        CHECK(name.find("encoder") == std::string::npos);
        CHECK(name.find("cross_attn") == std::string::npos);
    }
    model.eval();
    NoGradGuard ng;
    // Changing a later token leaves the logits of earlier positions unchanged.
    std::vector<std::int32_t> a = {2, 4, 5, 6, 7}, b = {2, 4, 5, 9, 9};
    Array<double> la = model.forward_causal(a, 1, 5).value(), lb = model.forward_causal(b, 1, 5).value();
    for (std::size_t t = 0; t < 3; ++t)
        for (std::size_t v = 0; v < 13; ++v) CHECK(la(0, t, v) == lb(0, t, v));
    CHECK(la(0, 3, 0) != lb(0, 3, 0));
    CHECK_THROWS_WITH(model.encode(a, 1, 5, model.padding_mask(a, 1, 5)), Catch::Contains("decoder-only model has no encoder"));
}

TEST_CASE("gradcheck/layer/decoder_only_transformer", "[gradcheck][nn][tasks]") {
    for (std::string share : {"none", "all"}) {
        auto cfg = tiny_config();
        cfg.family = nn::Family::DecoderOnly;
        cfg.share_embeddings = share;
        nn::Transformer<double> model(cfg, positions<double>({{"sinusoidal", {}}, {"shaw", {{"k", "2"}}}, {"t5", {}}}));
        std::vector<std::int32_t> in = {2, 4, 5, 6, 2, 7, 0, 0};
        std::vector<std::int32_t> out = {0, 5, 6, 3, 0, 8, 3, 0};  // loss on the targets only
        require_gradcheck(
            [&] {
                model.dropout_rng().reseed(7);
                V logits = model.forward_causal(in, 2, 4);
                CrossEntropyOptions o;
                o.ignore_index = 0;
                o.label_smoothing = 0.1;
                return cross_entropy(logits, out, o);
            },
            model.parameters());
    }
}

TEST_CASE("tasks/language-model windows score every token once with the right context", "[tasks][lm]") {
    std::vector<std::int32_t> t(103);
    for (std::size_t i = 0; i < t.size(); ++i) t[i] = static_cast<std::int32_t>(100 + i);  // id = 100 + position
    for (std::size_t N : {8, 16, 200})
        for (std::size_t stride : {N, N / 2, std::size_t(3)}) {
            INFO("N " << N << " stride " << stride);
            std::vector<int> scored(t.size(), 0);
            for (const auto& e : stream_windows(t, N, stride)) {
                const std::size_t inputs = e.src.size() + e.tgt.size() - 1;
                CHECK(inputs <= N);
                // contiguous: the window is t[first .. first + inputs]
                const std::size_t first = static_cast<std::size_t>(e.src.front() - 100);
                for (std::size_t k = 0; k < e.src.size(); ++k) CHECK(e.src[k] == t[first + k]);
                for (std::size_t k = 0; k < e.tgt.size(); ++k) {
                    CHECK(e.tgt[k] == t[first + e.src.size() + k]);
                    ++scored[first + e.src.size() + k];
                }
                // after the first window, a sliding window's scored tokens see N - stride tokens before them
                if (first > 0 && stride < N) CHECK(e.src.size() == N - e.tgt.size() + 1);
            }
            CHECK(scored[0] == 0);
            for (std::size_t i = 1; i < t.size(); ++i) CHECK(scored[i] == 1);
        }
}

TEST_CASE("tasks/sliding windows projected at their scored positions only give the same numbers", "[tasks][lm]") {
    // evaluate_loss(..., scored_only) computes the top layer and the projection only at the positions with a
    // target (forward_causal_rows): each such row's logits must be the full forward's, so that ppl_sliding
    // does not move. Up to float rounding: OpenBLAS rounds a row differently with the number of rows
    // multiplied (its small-matrix kernels, and the Haswell kernels), a few logits in the last bit.
    for (const char* enc : {"alibi", "rope", "sinusoidal"}) {
        INFO(enc);
        auto cfg = test::tiny_config(40);
        cfg.family = nn::Family::DecoderOnly;
        cfg.dims.dropout = cfg.dims.attention_dropout = 0.0;
        nn::Transformer<float> model(cfg, test::positions<float>({{enc, {}}}));
        model.eval();
        std::vector<std::int32_t> t(203);
        for (std::size_t i = 0; i < t.size(); ++i) t[i] = static_cast<std::int32_t>(4 + (i * 7 + i / 5) % 30);
        const auto windows = stream_windows(t, 24, 4);  // a window of 24 scores its last 4
        const Batch b = make_batch(windows, {0, 3, 7, 11}, Layout::DecoderOnly);
        std::vector<std::int32_t> rows;
        for (std::size_t i = 0; i < b.tgt_out.size(); ++i)
            if (b.tgt_out[i] != PAD_ID) rows.push_back(static_cast<std::int32_t>(i));
        REQUIRE(rows.size() < b.tgt_out.size() / 2);
        NoGradGuard ng;
        const Var<float> full = model.forward_causal(b.tgt_in, b.B, b.Lt);
        const Var<float> some = model.forward_causal_rows(b.tgt_in, b.B, b.Lt, rows);
        const std::size_t V = full.shape().back();
        REQUIRE(some.shape() == Shape{rows.size(), V});
        std::size_t differ = 0, far = 0;
        for (std::size_t i = 0; i < rows.size(); ++i)
            for (std::size_t v = 0; v < V; ++v) {
                const float x = some.data()[i * V + v], y = full.data()[rows[i] * V + v];
                differ += x != y;
                far += std::fabs(x - y) > 1e-5f * std::max(1.0f, std::fabs(y));
            }
        INFO(differ << " of " << rows.size() * V << " logits differ in their last bits");
        CHECK(far == 0);
        const EvalLoss a = evaluate_loss(model, windows, 256), c = evaluate_loss(model, windows, 256, true);
        CHECK(a.tokens == 202);
        CHECK(c.tokens == a.tokens);
        CHECK(c.loss == Approx(a.loss).epsilon(1e-6));  // the same rows summed in the same order
        CHECK(c.accuracy == a.accuracy);
        // and a wrong row is not the right one: the check can fail
        const Var<float> other = model.forward_causal_rows(b.tgt_in, b.B, b.Lt, {rows[1]});
        CHECK(std::fabs(other.data()[0] - full.data()[rows[0] * V]) > 0);
    }
    auto cfg = test::tiny_config(40);
    cfg.family = nn::Family::DecoderOnly;
    nn::Transformer<float> model(cfg, test::positions<float>({{"alibi", {}}}));
    CHECK_THROWS_AS(model.forward_causal_rows({5, 6, 7, 8}, 1, 4, {4}), std::out_of_range);
}

TEST_CASE("tasks/language-model loss by position: every scored token once, at its query position", "[tasks][lm]") {
    auto cfg = test::tiny_config(40);
    cfg.family = nn::Family::DecoderOnly;
    cfg.dims.dropout = cfg.dims.attention_dropout = 0.0;
    nn::Transformer<float> model(cfg, test::positions<float>({{"alibi", {}}}));
    model.eval();
    std::vector<std::int32_t> t(45);
    for (std::size_t i = 0; i < t.size(); ++i) t[i] = static_cast<std::int32_t>(4 + (i * 7) % 30);
    const std::size_t N = 8;
    // 44 targets: five windows of 8, then one that scores the last 4 at its positions 4..7 with the 4 tokens
    // before them as context (stream_windows keeps every window N long where the stream allows)
    const auto windows = stream_windows(t, N, N);
    const auto at = loss_by_position(model, windows, 64, N);
    REQUIRE(at.size() == N);
    for (std::size_t p = 0; p < N; ++p) CHECK(at[p].second == (p < 4 ? 5u : 6u));
    // the weighted mean is the windows' loss as evaluate_loss computes it
    double sum = 0;
    std::size_t n = 0;
    for (auto& [s, c] : at) sum += s, n += c;
    CHECK(n == 44);
    CHECK(sum / double(n) == Approx(evaluate_loss(model, windows, 64).loss).epsilon(1e-5));
    // position 5 of the second window, by hand: the loss of the target its column predicts
    NoGradGuard ng;
    BatchOptions bo;
    bo.layout = Layout::DecoderOnly;
    const Batch b = make_batch(windows, {1}, Layout::DecoderOnly);
    const Var<float> logits = batch_logits(model, b);
    const std::size_t V = logits.shape().back();
    const float* row = logits.data() + 5 * V;
    double z = 0;
    for (std::size_t v = 0; v < V; ++v) z += std::exp(double(row[v]));
    const double nll = std::log(z) - double(row[b.tgt_out[5]]);
    CHECK(b.tgt_out[5] == t[8 + 6]);  // window 2 holds inputs t[8 .. 15]; column 5 predicts t[14]
    const auto one = loss_by_position(model, {windows[1]}, 64, N);
    CHECK(one[5].first == Approx(nll).epsilon(1e-6));
}

TEST_CASE("tasks/decoder-only algorithmic run: per-length accuracy and the extension ratio", "[tasks][e2e]") {
    const fs::path results = fs::temp_directory_path() / ("relpos-tasks-algo-" + std::to_string(getpid()));
    fs::remove_all(results);
    RunOptions opt;
    opt.quiet = true;
    REQUIRE(run_experiment(kSrc + "/tests/fixtures/tiny_decoder_only.yaml", {"results_dir=" + results.string()}, opt) == 0);
    const YAML::Node m = YAML::LoadFile((results / "tiny_decoder_only" / "runs" / "seed=3" / "results.json").string())["metrics"];
    // every test length 6..8 has its accuracy, and the overall accuracy is their mean (equal counts)
    double sum = 0;
    for (int n = 6; n <= 8; ++n) {
        const std::string key = "test.accuracy@" + std::to_string(n);
        REQUIRE(m[key]);
        sum += m[key].as<double>();
    }
    CHECK(m["test.accuracy"].as<double>() == Approx(sum / 3).margin(1e-3));
    for (int n = 2; n <= 5; ++n) CHECK(m["val.accuracy@" + std::to_string(n)]);
    // the extension ratio is a length that reaches 90% (or 0), divided by the training length 5
    const double ratio = m["test.extension_ratio"].as<double>();
    CHECK((ratio == 0.0 || (ratio * 5 >= 2 - 1e-9 && ratio * 5 <= 8 + 1e-9)));
    if (ratio > 0) CHECK(m["val.accuracy@2"].as<double>() >= 90.0);
    fs::remove_all(results);
}

TEST_CASE("tasks/the default test split is named after the task", "[tasks][config]") {
    // Multi30k's test sets are years; a synthetic or language-model task's test split is `test`
    // (it used to inherit test2016).
    CHECK(load_config(write_config("s1.yaml", "name: t\ndata: {task: copy}\n")).data.test_splits ==
          std::vector<std::string>{"test"});
    CHECK(load_config(write_config("s2.yaml", "name: t\ndata: {task: copy}\nmodel: {family: decoder_only}\n")).eval.splits ==
          std::vector<std::string>{"val", "test"});
    CHECK(load_config(write_config("s3.yaml", "name: t\n")).data.test_splits == std::vector<std::string>{"test2016"});
}
