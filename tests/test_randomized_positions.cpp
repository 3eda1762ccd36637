// Randomized positions (Ruoss et al. 2023): the option, the model's draws in training and evaluation, and
// randomized_eval: sample for every registered encoding that reads positions. That each encoding follows the
// map it is given is tests/test_position_generic.cpp's check.
#include "nn/attention.hpp"
#include "nn/position.hpp"
#include "nn/transformer.hpp"
#include "tests/nn_helpers.hpp"

using namespace relpos;
using namespace relpos::test;
using V = Var<double>;

namespace {

std::shared_ptr<nn::PositionEncoding<double>> make(const std::string& type, std::map<std::string, std::string> opts,
                                                   nn::Side side, Rng& rng) {
    nn::MapOptions o(opts, "model.position");
    return nn::make_position<double>(type, o, nn::PositionContext{8, 2, side, &rng});
}

void require_equal(const Array<double>& a, const Array<double>& b) {
    REQUIRE(a.size() == b.size());
    for (std::size_t i = 0; i < a.size(); ++i) REQUIRE(std::abs(a.data()[i] - b.data()[i]) < 1e-12);
}

}  // namespace

// That every registered encoding reads its positions from the map (embeddings and every hook, queries and
// keys), and its gradients through a map, are generic checks: tests/test_position_generic.cpp.

TEST_CASE("randomized/option errors", "[randomized][position]") {
    Rng rng(1);
    CHECK_THROWS_WITH(make("none", {{"randomized", "8"}}, nn::Side::Encoder, rng),
                      Catch::Contains("randomized") && Catch::Contains("nothing to randomize"));
    CHECK_THROWS_WITH(make("learned", {{"max_len", "16"}, {"randomized", "32"}}, nn::Side::Encoder, rng),
                      Catch::Contains("randomized") && Catch::Contains("raise max_len to at least 32"));
    CHECK_THROWS_WITH(make("rope", {{"randomized", "-1"}}, nn::Side::Encoder, rng), Catch::Contains("randomized"));
    CHECK(make("learned", {{"max_len", "16"}, {"randomized", "16"}}, nn::Side::Encoder, rng)->randomized_range() == 16);
}

TEST_CASE("randomized/a model draws new positions per training pass and none in eval", "[randomized][nn]") {
    auto cfg = tiny_config(13);
    cfg.family = nn::Family::DecoderOnly;
    cfg.dims.dropout = cfg.dims.attention_dropout = 0.0;
    nn::Transformer<double> plain(cfg, positions<double>({{"rope", {}}}));
    nn::Transformer<double> rnd(cfg, positions<double>({{"rope", {{"randomized", "64"}}}}));
    const std::vector<std::int32_t> ids = {2, 4, 5, 6, 7, 8};
    NoGradGuard ng;
    const Array<double> a = rnd.forward_causal(ids, 1, 6).value(), b = rnd.forward_causal(ids, 1, 6).value();
    bool differ = false;
    for (std::size_t i = 0; i < a.size(); ++i) differ = differ || a.data()[i] != b.data()[i];
    CHECK(differ);  // two draws
    plain.eval();
    rnd.eval();
    require_equal(rnd.forward_causal(ids, 1, 6).value(), plain.forward_causal(ids, 1, 6).value());
    // and incremental decoding after training passes sees the real positions too
    rnd.train();
    rnd.forward_causal(ids, 1, 6);
    rnd.eval();
    auto state = rnd.start_decoding();
    const Array<double> full = plain.forward_causal(ids, 1, 6).value();
    for (std::size_t t = 0; t < ids.size(); ++t) {
        const Array<double> step = rnd.decode_step({ids[t]}, state).value();
        for (std::size_t v = 0; v < 13; ++v) REQUIRE(std::abs(step(0, v) - full(0, t, v)) < 1e-12);
    }
}

TEST_CASE("randomized/randomized_eval: sample draws at evaluation, reproducibly, and decodes as it scores",
          "[randomized][nn]") {
    const std::vector<std::int32_t> ids = {2, 4, 5, 6, 7, 8};
    for (const auto& type : nn::position_registry().names()) {  // every encoding that reads positions
        Rng probe(0);
        if (!make(type, {}, nn::Side::Decoder, probe)->reads_positions()) continue;
        INFO(type);
        std::map<std::string, std::string> opts;
        auto cfg = tiny_config(13);
        cfg.family = nn::Family::DecoderOnly;
        cfg.dims.dropout = cfg.dims.attention_dropout = 0.0;
        auto plain_opts = opts;
        opts["randomized"] = "64";
        auto identity_opts = opts;
        opts["randomized_eval"] = "sample";
        nn::Transformer<double> plain(cfg, positions<double>({{type, plain_opts}}));
        nn::Transformer<double> ident(cfg, positions<double>({{type, identity_opts}}));
        nn::Transformer<double> rnd(cfg, positions<double>({{type, opts}}));
        NoGradGuard ng;
        plain.eval();
        ident.eval();
        const Array<double> real = plain.forward_causal(ids, 1, 6).value();
        require_equal(ident.forward_causal(ids, 1, 6).value(), real);  // the default evaluates at 0, 1, 2, ...
        rnd.eval();
        const Array<double> a = rnd.forward_causal(ids, 1, 6).value();
        const Array<double> b = rnd.forward_causal(ids, 1, 6).value();  // the stream goes on: another draw
        rnd.train();
        rnd.forward_causal(ids, 1, 6);  // training draws come from another stream
        rnd.eval();                     // and eval() restarts the evaluation stream
        const Array<double> c = rnd.forward_causal(ids, 1, 6).value();
        require_equal(c, a);
        auto differs = [](const Array<double>& x, const Array<double>& y) {
            for (std::size_t i = 0; i < x.size(); ++i)
                if (std::abs(x.data()[i] - y.data()[i]) > 1e-9) return true;
            return false;
        };
        CHECK(differs(a, b));
        CHECK(differs(a, real));
        // Incremental decoding draws as many positions as it says it will feed, from the restarted stream:
        // the same map as the full pass of that length, so the same logits step by step.
        rnd.eval();
        auto state = rnd.start_decoding(ids.size());
        for (std::size_t t = 0; t < ids.size(); ++t) {
            const Array<double> step = rnd.decode_step({ids[t]}, state).value();
            for (std::size_t v = 0; v < 13; ++v) REQUIRE(std::abs(step(0, v) - a(0, t, v)) < 1e-9);
        }
        auto unsized = rnd.start_decoding();
        CHECK_THROWS_AS(rnd.decode_step({ids[0]}, unsized), std::logic_error);
    }
}

// A window as long as the range holds every position of [0, range): a draw is then the real positions 0, 1,
// 2, ..., in training and in a sampled evaluation alike (an LM study's 1,024-token windows with
// randomized: 1024 score the same both ways). Fails on a draw with repeats or from a shifted range.
TEST_CASE("randomized/a draw as long as the range is the real positions", "[randomized][nn]") {
    const std::vector<std::int32_t> ids = {2, 4, 5, 6, 7, 8};
    for (const auto& type : nn::position_registry().names()) {
        Rng probe(0);
        if (!make(type, {}, nn::Side::Decoder, probe)->reads_positions()) continue;
        INFO(type);
        auto cfg = tiny_config(13);
        cfg.family = nn::Family::DecoderOnly;
        cfg.dims.dropout = cfg.dims.attention_dropout = 0.0;
        nn::Transformer<double> plain(cfg, positions<double>({{type, {}}}));
        nn::Transformer<double> full(cfg, positions<double>({{type, {{"randomized", "6"}, {"randomized_eval", "sample_by_length"}}}}));
        nn::Transformer<double> wider(cfg, positions<double>({{type, {{"randomized", "7"}, {"randomized_eval", "sample_by_length"}}}}));
        NoGradGuard ng;
        plain.eval();
        const Array<double> real = plain.forward_causal(ids, 1, 6).value();
        full.eval();
        require_equal(full.forward_causal(ids, 1, 6).value(), real);
        full.train();
        require_equal(full.forward_causal(ids, 1, 6).value(), real);
        // one spare position: some of the draws leave out a position, and those differ from the real ones
        wider.eval();
        bool differs = false;
        for (int i = 0; i < 8 && !differs; ++i) {
            const Array<double> w = wider.forward_causal(ids, 1, 6).value();
            for (std::size_t j = 0; j < w.size(); ++j) differs = differs || std::abs(w.data()[j] - real.data()[j]) > 1e-9;
        }
        CHECK(differs);
    }
}

TEST_CASE("randomized/randomized_eval option errors", "[randomized][position]") {
    Rng rng(1);
    CHECK_THROWS_WITH(make("rope", {{"randomized_eval", "sample"}}, nn::Side::Encoder, rng),
                      Catch::Contains("randomized_eval") && Catch::Contains("randomized: N"));
    CHECK_THROWS_WITH(make("rope", {{"randomized", "8"}, {"randomized_eval", "always"}}, nn::Side::Encoder, rng),
                      Catch::Contains("randomized_eval") && Catch::Contains("sample"));
    CHECK(make("rope", {{"randomized", "8"}, {"randomized_eval", "sample"}}, nn::Side::Encoder, rng)->randomized_at_eval());
    CHECK_FALSE(make("rope", {{"randomized", "8"}}, nn::Side::Encoder, rng)->randomized_at_eval());
    CHECK_THROWS_WITH(make("rope", {{"randomized_eval", "sample_by_length"}}, nn::Side::Encoder, rng),
                      Catch::Contains("randomized_eval") && Catch::Contains("randomized: N"));
    const auto by_length = make("rope", {{"randomized", "8"}, {"randomized_eval", "sample_by_length"}}, nn::Side::Encoder, rng);
    CHECK(by_length->randomized_at_eval());
    CHECK(by_length->randomized_eval_by_length());
    CHECK_FALSE(make("rope", {{"randomized", "8"}, {"randomized_eval", "sample"}}, nn::Side::Encoder, rng)
                    ->randomized_eval_by_length());
}

TEST_CASE("randomized/sample_by_length asks for evaluation batches of one length, sample does not",
          "[randomized][nn]") {
    auto cfg = tiny_config(13);
    cfg.family = nn::Family::EncoderOnly;
    auto model = [&](const std::map<std::string, std::string>& opts) {
        return nn::Transformer<float>(cfg, positions<float>({{"rope", opts}}));
    };
    CHECK(model({{"randomized", "64"}, {"randomized_eval", "sample_by_length"}}).eval_batches_by_length());
    CHECK_FALSE(model({{"randomized", "64"}, {"randomized_eval", "sample"}}).eval_batches_by_length());
    CHECK_FALSE(model({{"randomized", "64"}}).eval_batches_by_length());
    CHECK_FALSE(model({}).eval_batches_by_length());
}
