// Randomized positions (Ruoss et al. 2023): every encoding reads its positions through the map the model
// draws at training time. The reference for a map m is the encoding itself on a longer sequence with the
// identity map (which the reference fixtures check against PyTorch), read at rows and columns m: an
// encoding that ignored the map, or used it for queries but not keys, fails.
#include "nn/attention.hpp"
#include "nn/position.hpp"
#include "nn/transformer.hpp"
#include "tests/nn_helpers.hpp"

using namespace relpos;
using namespace relpos::test;
using V = Var<double>;

namespace {

const std::vector<std::size_t> kMap = {0, 2, 3, 7, 8, 12};  // sorted, with gaps; 6 indices in [0, 13)
constexpr std::size_t kBig = 13;

nn::PositionMap map_of(const std::vector<std::size_t>& m) {
    return nn::PositionMap{std::make_shared<const std::vector<std::size_t>>(m)};
}

std::shared_ptr<nn::PositionEncoding<double>> make(const std::string& type, std::map<std::string, std::string> opts,
                                                   nn::Side side, Rng& rng) {
    nn::MapOptions o(opts, "model.position");
    return nn::make_position<double>(type, o, nn::PositionContext{8, 2, side, &rng});
}

// Rows `m` (axis -2) and, if cols, columns `m` (axis -1) of a (..., L, L') array.
Array<double> pick(const Array<double>& a, const std::vector<std::size_t>& m, bool cols) {
    const auto s = a.shape();
    const std::size_t nd = s.size(), R = s[nd - 2], C = s[nd - 1];
    std::size_t outer = 1;
    for (std::size_t i = 0; i + 2 < nd; ++i) outer *= s[i];
    const std::size_t oc = cols ? m.size() : C;
    std::vector<std::size_t> shape(s.begin(), s.end());
    shape[nd - 2] = m.size();
    shape[nd - 1] = oc;
    Array<double> r = zeros<double>(Shape(shape.begin(), shape.end()));
    for (std::size_t o = 0; o < outer; ++o)
        for (std::size_t i = 0; i < m.size(); ++i)
            for (std::size_t j = 0; j < oc; ++j)
                r.data()[(o * m.size() + i) * oc + j] = a.data()[(o * R + m[i]) * C + (cols ? m[j] : j)];
    return r;
}

void require_equal(const Array<double>& a, const Array<double>& b) {
    REQUIRE(a.size() == b.size());
    for (std::size_t i = 0; i < a.size(); ++i) REQUIRE(std::abs(a.data()[i] - b.data()[i]) < 1e-12);
}

}  // namespace

TEST_CASE("randomized/embeddings read the mapped positions", "[randomized][position]") {
    for (std::string type : {"sinusoidal", "learned"}) {
        INFO(type);
        Rng rng(1);
        auto enc = make(type, {{"randomized", "16"}}, nn::Side::Decoder, rng);
        CHECK(enc->randomized_range() == 16);
        NoGradGuard ng;
        const Array<double> big = enc->embed(V(zeros<double>({1, kBig, 8})), 0).value();
        enc->set_position_map(map_of(kMap));
        const Array<double> mapped = enc->embed(V(zeros<double>({1, kMap.size(), 8})), 0).value();
        require_equal(mapped, pick(big, kMap, false));
        enc->set_position_map({});  // the identity again: the first rows
        require_equal(enc->embed(V(zeros<double>({1, 3, 8})), 0).value(), pick(big, {0, 1, 2}, false));
    }
}

TEST_CASE("randomized/logit biases use mapped query and key positions", "[randomized][position]") {
    const std::vector<std::pair<std::string, std::map<std::string, std::string>>> specs = {
        {"alibi", {}}, {"kerple", {}}, {"t5", {{"num_buckets", "8"}, {"max_distance", "16"}}}, {"fire", {}},
        {"shaw", {{"k", "3"}}}, {"shaw", {{"k", "3"}, {"per_head", "true"}}}, {"txl", {}}};
    for (auto [type, opts] : specs)
        for (auto kind : {nn::AttentionSite::EncoderSelf, nn::AttentionSite::DecoderSelf}) {
            INFO(type << (opts.count("per_head") ? " per_head" : "") << " site " << int(kind));
            Rng rng(2), init(3);
            opts["randomized"] = "32";
            auto enc = make(type, opts, kind == nn::AttentionSite::EncoderSelf ? nn::Side::Encoder : nn::Side::Decoder, rng);
            auto hook = enc->for_attention(nn::AttentionSite{kind, 0, 2, 4}, init);
            REQUIRE(hook);
            NoGradGuard ng;
            const Array<double> qbig = randn<double>({1, 2, kBig, 4}, 4);
            const Array<double> big = hook->logit_bias(V(qbig), kBig, 0).value();
            enc->set_position_map(map_of(kMap));  // set after the hook was made: the hook must see it
            const Array<double> mapped = hook->logit_bias(V(pick(qbig, kMap, false)), kMap.size(), 0).value();
            require_equal(mapped, pick(big, kMap, true));
        }
}

TEST_CASE("randomized/shaw values and rope rotations use mapped positions", "[randomized][position]") {
    NoGradGuard ng;
    {
        Rng rng(5), init(6);
        auto enc = make("shaw", {{"k", "3"}, {"randomized", "32"}}, nn::Side::Encoder, rng);
        auto hook = enc->for_attention(nn::AttentionSite{nn::AttentionSite::EncoderSelf, 0, 2, 4}, init);
        // weights on the mapped keys only: the long sequence's output at the mapped queries is the reference
        Array<double> abig = zeros<double>({1, 2, kBig, kBig});
        const Array<double> a = randu<double>({1, 2, kMap.size(), kMap.size()}, 7, 0, 1);
        for (std::size_t h = 0; h < 2; ++h)
            for (std::size_t i = 0; i < kMap.size(); ++i)
                for (std::size_t j = 0; j < kMap.size(); ++j) abig(0, h, kMap[i], kMap[j]) = a(0, h, i, j);
        const Array<double> big = hook->output_term(V(abig), 0).value();
        enc->set_position_map(map_of(kMap));
        require_equal(hook->output_term(V(a), 0).value(), pick(big, kMap, false));
    }
    {
        Rng rng(8), init(9);
        auto enc = make("rope", {{"randomized", "32"}}, nn::Side::Decoder, rng);
        auto hook = enc->for_attention(nn::AttentionSite{nn::AttentionSite::DecoderSelf, 0, 2, 4}, init);
        const Array<double> qbig = randn<double>({1, 2, kBig, 4}, 10), kbig = randn<double>({1, 2, kBig, 4}, 11);
        V q1(qbig), k1(kbig);
        hook->queries_keys(q1, k1, 0, 0);
        enc->set_position_map(map_of(kMap));
        V q2(pick(qbig, kMap, false)), k2(pick(kbig, kMap, false));
        hook->queries_keys(q2, k2, 0, 0);
        require_equal(q2.value(), pick(q1.value(), kMap, false));
        require_equal(k2.value(), pick(k1.value(), kMap, false));
    }
}

TEST_CASE("gradcheck/randomized positions through attention", "[randomized][gradcheck]") {
    const std::vector<std::pair<std::string, std::map<std::string, std::string>>> specs = {
        {"shaw", {{"k", "2"}}}, {"shaw", {{"k", "2"}, {"per_head", "true"}}}, {"t5", {{"num_buckets", "8"}, {"max_distance", "16"}}},
        {"kerple", {}}, {"fire", {}}, {"learned", {{"max_len", "16"}}}, {"rope", {}}, {"txl", {}}};
    for (auto [type, opts] : specs) {
        INFO(type);
        Rng rng(12), init(13), drng(14);
        opts["randomized"] = "16";
        auto enc = make(type, opts, nn::Side::Decoder, rng);
        std::vector<std::shared_ptr<nn::PositionEncoding<double>>> pos{enc};
        nn::MultiHeadAttention<double> mha(8, 2, 0.0, nn::AttentionSite{nn::AttentionSite::DecoderSelf, 0, 2, 4}, pos, init, drng);
        enc->set_position_map(map_of({1, 4, 5, 11}));
        V x = leaf({2, 4, 8}, 15);
        std::vector<V> leaves{x};
        for (auto& p : mha.parameters()) leaves.push_back(p);
        for (auto& p : enc->parameters()) leaves.push_back(p);
        require_gradcheck([&] { return mha.forward(enc->embed(x, 0), enc->embed(x, 0), nullptr); }, leaves);
    }
}

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
    const std::vector<std::pair<std::string, std::map<std::string, std::string>>> specs = {
        {"rope", {}}, {"sinusoidal", {}}, {"learned", {{"max_len", "64"}}}, {"shaw", {{"k", "3"}}},
        {"t5", {{"num_buckets", "8"}, {"max_distance", "16"}}}, {"alibi", {}}, {"kerple", {}}, {"fire", {}},
        {"txl", {}}};
    const std::vector<std::int32_t> ids = {2, 4, 5, 6, 7, 8};
    for (auto [type, opts] : specs) {
        INFO(type);
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

TEST_CASE("randomized/randomized_eval option errors", "[randomized][position]") {
    Rng rng(1);
    CHECK_THROWS_WITH(make("rope", {{"randomized_eval", "sample"}}, nn::Side::Encoder, rng),
                      Catch::Contains("randomized_eval") && Catch::Contains("randomized: N"));
    CHECK_THROWS_WITH(make("rope", {{"randomized", "8"}, {"randomized_eval", "always"}}, nn::Side::Encoder, rng),
                      Catch::Contains("randomized_eval") && Catch::Contains("sample"));
    CHECK(make("rope", {{"randomized", "8"}, {"randomized_eval", "sample"}}, nn::Side::Encoder, rng)->randomized_at_eval());
    CHECK_FALSE(make("rope", {{"randomized", "8"}}, nn::Side::Encoder, rng)->randomized_at_eval());
}
