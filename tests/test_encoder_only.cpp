// The encoder-only family: one bidirectional stack, one prediction per position. A model that leaked the
// causal mask into it, read padding, mislabelled the slots or decoded instead of filling slots fails here.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include <yaml-cpp/yaml.h>

#include "experiments/config/config.hpp"
#include "experiments/data/batching.hpp"
#include "experiments/tasks/task.hpp"
#include "experiments/run/experiment.hpp"
#include "experiments/train/trainer.hpp"
#include "tests/nn_helpers.hpp"

using namespace relpos;
using namespace relpos::test;
namespace fs = std::filesystem;
using V = Var<double>;

namespace {

const std::string kSrc = std::string(RELPOS_SOURCE_DIR);

nn::TransformerConfig encoder_only_config() {
    auto cfg = tiny_config(13);
    cfg.family = nn::Family::EncoderOnly;
    cfg.dims.dropout = cfg.dims.attention_dropout = 0.0;
    return cfg;
}

}  // namespace

// Every registered encoding: padding invariance and both directions are generic checks
// (tests/test_position_generic.cpp).

TEST_CASE("encoder_only/the model has no decoder", "[nn][encoder_only]") {
    nn::Transformer<double> model(encoder_only_config(), positions<double>({{"rope", {}}}));
    CHECK(model.dec_layers.empty());
    CHECK(model.dec_pos.empty());
    CHECK(model.enc_layers.size() == encoder_only_config().encoder_layers);
    for (auto& [name, p] : model.named_parameters()) CHECK(name.rfind("decoder.", 0) != 0);
    CHECK_THROWS_AS(model.start_decoding(), std::logic_error);
    CHECK_THROWS_AS(model.forward_causal({2, 4}, 1, 2), std::logic_error);
    nn::Transformer<double> ed(tiny_config(13), positions<double>({{"rope", {}}}));
    CHECK_THROWS_AS(ed.forward_bidirectional({2, 4}, 1, 2), std::logic_error);
}

TEST_CASE("gradcheck/layer/encoder_only_transformer", "[gradcheck][nn][encoder_only]") {
    for (std::string share : {"none", "all"}) {
        INFO(share);
        auto cfg = tiny_config();
        cfg.family = nn::Family::EncoderOnly;
        cfg.share_embeddings = share;
        nn::Transformer<double> model(cfg, positions<double>({{"sinusoidal", {}}, {"shaw", {{"k", "2"}}}, {"t5", {}}}));
        const std::vector<std::int32_t> in = {2, 4, 5, 1, 1, 2, 7, 1, 0, 0};
        const std::vector<std::int32_t> out = {0, 0, 0, 5, 4, 0, 0, 7, 0, 0};  // labels on the slots only
        require_gradcheck(
            [&] {
                model.dropout_rng().reseed(7);
                V logits = model.forward_bidirectional(in, 2, 5);
                CrossEntropyOptions o;
                o.ignore_index = 0;
                o.label_smoothing = 0.1;
                return cross_entropy(logits, out, o);
            },
            model.parameters());
    }
}

TEST_CASE("encoder_only/batches label the last |tgt| positions of each input", "[encoder_only][data]") {
    const std::vector<Example> ex = {{{2, 7, 8, 4, 1, 1}, {8, 7}}, {{2, 5, 4, 1}, {5}}};
    const Batch b = make_batch(ex, {0, 1}, Layout::EncoderOnly);
    REQUIRE(b.Lt == 6);
    REQUIRE(b.Ls == 0);
    CHECK(std::vector<std::int32_t>(b.tgt_in.begin(), b.tgt_in.begin() + 6) == std::vector<std::int32_t>{2, 7, 8, 4, 1, 1});
    CHECK(std::vector<std::int32_t>(b.tgt_out.begin(), b.tgt_out.begin() + 6) == std::vector<std::int32_t>{0, 0, 0, 0, 8, 7});
    CHECK(std::vector<std::int32_t>(b.tgt_in.begin() + 6, b.tgt_in.end()) == std::vector<std::int32_t>{2, 5, 4, 1, 0, 0});
    CHECK(std::vector<std::int32_t>(b.tgt_out.begin() + 6, b.tgt_out.end()) == std::vector<std::int32_t>{0, 0, 0, 5, 0, 0});
    CHECK(b.n_tgt_tokens == 3);
    CHECK_THROWS_AS(make_batch({{{2, 4}, {5, 6, 7}}}, {0}, Layout::EncoderOnly), std::invalid_argument);
}

TEST_CASE("encoder_only/algorithmic run fills the slots: per-length accuracy and the extension ratio",
          "[encoder_only][tasks][e2e]") {
    const fs::path results = fs::temp_directory_path() / ("relpos-encoder-only-" + std::to_string(getpid()));
    fs::remove_all(results);
    RunOptions opt;
    opt.quiet = true;
    REQUIRE(run_experiment(kSrc + "/tests/fixtures/tiny_encoder_only.yaml", {"results_dir=" + results.string()}, opt) == 0);
    const fs::path run = results / "tiny_encoder_only" / "runs" / "seed=3";
    const YAML::Node m = YAML::LoadFile((run / "results.json").string())["metrics"];
    double sum = 0;
    for (int n = 6; n <= 8; ++n) {
        const std::string key = "test.accuracy@" + std::to_string(n);
        REQUIRE(m[key]);
        sum += m[key].as<double>();
    }
    CHECK(m["test.accuracy"].as<double>() == Approx(sum / 3).margin(1e-3));
    for (int n = 2; n <= 5; ++n) CHECK(m["val.accuracy@" + std::to_string(n)]);
    CHECK(m["val.loss"].as<double>() > 0);
    const double ratio = m["test.extension_ratio"].as<double>();
    CHECK((ratio == 0.0 || (ratio * 5 >= 2 - 1e-9 && ratio * 5 <= 8 + 1e-9)));
    // The log says which form the task took, and the config records the family.
    CHECK(YAML::LoadFile((run / "config.yaml").string())["model"]["family"].as<std::string>() == "encoder_only");
    fs::remove_all(results);
}

TEST_CASE("encoder_only/tasks that have no encoder-only form say so", "[encoder_only][config]") {
    const fs::path d = fs::temp_directory_path() / ("relpos-encoder-only-cfg-" + std::to_string(getpid()));
    fs::create_directories(d);
    const fs::path p = d / "c.yaml";
    std::ofstream(p) << "name: t\ndata: {task: brown}\nmodel: {family: encoder_only}\n";
    std::string what;
    try {
        LoadFlags flags;
        flags.check_paths = false;  // a clone has no Brown corpus until `make data`; the family check needs none
        make_task(load_config(p.string(), {}, flags));
    } catch (const std::exception& e) {
        what = e.what();
    }
    CHECK(what.find("model.family: task 'brown' trains decoder_only models, not encoder_only; set model.family: "
                    "decoder_only") != std::string::npos);
    fs::remove_all(d);
}
