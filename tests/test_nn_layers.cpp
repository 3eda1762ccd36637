// Gradient checks (double, every input and parameter) for every layer, plus module behaviour.
#include "nn/transformer.hpp"
#include "tests/nn_helpers.hpp"

using namespace relpos;
using namespace relpos::test;
using V = Var<double>;

namespace {
std::vector<V> with(std::vector<V> a, const std::vector<V>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}
}  // namespace

TEST_CASE("gradcheck/layer/linear", "[gradcheck][nn]") {
    Rng rng(1);
    nn::Linear<double> lin(4, 3, true, rng);
    V x = leaf({2, 5, 4}, 2);
    require_gradcheck([&] { return lin.forward(x); }, with({x}, lin.parameters()));
}

TEST_CASE("gradcheck/layer/embedding", "[gradcheck][nn]") {
    Rng rng(3);
    nn::Embedding<double> emb(7, 4, true, rng);
    V h = leaf({2, 3, 4}, 4);
    std::vector<std::int32_t> ids = {1, 6, 1, 0, 2, 6};
    require_gradcheck([&] { return emb.forward(ids, {2, 3}); }, emb.parameters());
    require_gradcheck([&] { return emb.project(h); }, with({h}, emb.parameters()));  // shared output projection
}

TEST_CASE("gradcheck/layer/layer_norm", "[gradcheck][nn]") {
    nn::LayerNorm<double> ln(5);
    for (auto& p : ln.parameters()) p.value() = randn<double>(p.shape(), 5);
    V x = leaf({3, 5}, 6);
    require_gradcheck([&] { return ln.forward(x); }, with({x}, ln.parameters()));
}

TEST_CASE("gradcheck/layer/dropout", "[gradcheck][nn]") {
    Rng drng(9);
    nn::Dropout<double> d(0.4, drng);
    V x = leaf({4, 6}, 7);
    require_gradcheck([&] { drng.reseed(1); return d.forward(x); }, {x});
}

TEST_CASE("gradcheck/layer/feed_forward", "[gradcheck][nn]") {
    Rng rng(8), drng(9);
    nn::FeedForward<double> ff(4, 6, 0.2, rng, drng);
    V x = leaf({2, 3, 4}, 10);
    require_gradcheck([&] { drng.reseed(2); return ff.forward(x); }, with({x}, ff.parameters()));
}

TEST_CASE("gradcheck/layer/residual_post_and_pre_norm", "[gradcheck][nn]") {
    Rng rng(11), drng(12);
    nn::LayerNorm<double> ln(4);
    nn::Dropout<double> drop(0.2, drng);
    nn::Linear<double> f(4, 4, true, rng);
    V x = leaf({2, 3, 4}, 13);
    for (auto order : {nn::NormOrder::Post, nn::NormOrder::Pre}) {
        require_gradcheck(
            [&] {
                drng.reseed(3);
                return nn::residual<double>(order, ln, drop, x, [&](const V& y) { return tanh(f.forward(y)); });
            },
            with(with({x}, ln.parameters()), f.parameters()));
    }
}

TEST_CASE("gradcheck/layer/attention_self_masked", "[gradcheck][nn]") {
    Rng rng(14), drng(15);
    nn::AttentionSite site{nn::AttentionSite::EncoderSelf, 0, 2, 3};
    nn::MultiHeadAttention<double> mha(6, 2, 0.2, site, {}, rng, drng);
    V x = leaf({2, 4, 6}, 16);
    auto mask = nn::AttentionMask<double>::from_lengths({4, 2}, 4);
    xt::xarray<bool> am = xt::xarray<bool>::from_shape({4, 4});
    for (std::size_t i = 0; i < 16; ++i) am.data()[i] = (i % 5) == 3;  // an extra boolean attention mask
    mask.set_attn(am);
    require_gradcheck([&] { drng.reseed(4); return mha.forward(x, x, &mask); }, with({x}, mha.parameters()));
}

TEST_CASE("gradcheck/layer/attention_cross", "[gradcheck][nn]") {
    Rng rng(17), drng(18);
    nn::AttentionSite site{nn::AttentionSite::Cross, 0, 2, 3};
    nn::MultiHeadAttention<double> mha(6, 2, 0.0, site, {}, rng, drng);
    V x = leaf({2, 3, 6}, 19), mem = leaf({2, 5, 6}, 20);
    auto mask = nn::AttentionMask<double>::from_lengths({5, 3}, 5);
    require_gradcheck([&] { return mha.forward(x, mem, &mask); }, with({x, mem}, mha.parameters()));
}

TEST_CASE("gradcheck/layer/attention_causal", "[gradcheck][nn]") {
    Rng rng(21), drng(22);
    nn::AttentionSite site{nn::AttentionSite::DecoderSelf, 0, 2, 3};
    nn::MultiHeadAttention<double> mha(6, 2, 0.0, site, {}, rng, drng);
    V x = leaf({2, 4, 6}, 23);
    require_gradcheck([&] { return mha.forward(x, x, nullptr); }, with({x}, mha.parameters()));
}

TEST_CASE("gradcheck/layer/encoder_layer", "[gradcheck][nn]") {
    Rng rng(24), drng(25);
    nn::LayerDims d{6, 2, 8, 0.1, 0.1, nn::NormOrder::Post};
    auto pos = positions<double>({{"shaw", {{"k", "2"}}}})({6, 2, nn::Side::Encoder, &rng});
    nn::EncoderLayer<double> layer(d, 0, pos, rng, drng);
    V x = leaf({2, 4, 6}, 26);
    auto mask = nn::AttentionMask<double>::from_lengths({4, 3}, 4);
    require_gradcheck([&] { drng.reseed(5); return layer.forward(x, &mask); }, with({x}, layer.parameters()));
}

TEST_CASE("gradcheck/layer/decoder_layer", "[gradcheck][nn]") {
    Rng rng(27), drng(28);
    nn::LayerDims d{6, 2, 8, 0.1, 0.1, nn::NormOrder::Pre};
    auto pos = positions<double>({{"shaw", {{"k", "1"}}}})({6, 2, nn::Side::Decoder, &rng});
    nn::DecoderLayer<double> layer(d, 0, pos, rng, drng);
    V x = leaf({2, 3, 6}, 29), mem = leaf({2, 4, 6}, 30);
    auto mask = nn::AttentionMask<double>::from_lengths({4, 2}, 4);
    require_gradcheck([&] { drng.reseed(6); return layer.forward(x, mem, &mask); },
                      with({x, mem}, layer.parameters()));
}

TEST_CASE("gradcheck/layer/transformer", "[gradcheck][nn]") {
    for (std::string share : {"none", "all"}) {
        auto cfg = tiny_config();
        cfg.share_embeddings = share;
        nn::Transformer<double> model(cfg, positions<double>({{"sinusoidal", {}}, {"shaw", {{"k", "2"}}}}));
        std::vector<std::int32_t> src = {4, 5, 6, 7, 8, 9, 0, 0}, tgt_in = {2, 4, 5, 2, 6, 0};
        std::vector<std::int32_t> tgt_out = {4, 5, 3, 6, 3, 0};
        auto smask = model.padding_mask(src, 2, 4);
        require_gradcheck(
            [&] {
                model.dropout_rng().reseed(7);
                V mem = model.encode(src, 2, 4, smask);
                V logits = model.decode(tgt_in, 2, 3, mem, smask);
                CrossEntropyOptions o;
                o.ignore_index = 0;
                o.label_smoothing = 0.1;
                return cross_entropy(logits, tgt_out, o);
            },
            model.parameters());
    }
}

TEST_CASE("nn/parameter_names_are_stable", "[nn]") {
    auto cfg = tiny_config();
    cfg.encoder_layers = 2;
    nn::Transformer<float> model(cfg, positions<float>({{"shaw", {{"k", "4"}}}}));
    std::vector<std::string> names;
    for (auto& [n, p] : model.named_parameters()) names.push_back(n);
    auto has = [&](const std::string& n) { return std::find(names.begin(), names.end(), n) != names.end(); };
    CHECK(has("src_embed.weight"));
    CHECK(has("encoder.layers.0.self_attn.rel_k"));
    CHECK(has("encoder.layers.1.self_attn.rel_v"));
    CHECK(has("decoder.layers.0.self_attn.rel_k"));
    CHECK_FALSE(has("decoder.layers.0.cross_attn.rel_k"));  // off in encoder-decoder attention by default
    CHECK(has("encoder.layers.0.self_attn.q_proj.weight"));
    CHECK(has("decoder.layers.0.ffn.fc1.bias"));
    CHECK_FALSE(has("tgt_embed.weight"));  // shared with the source embedding (share_embeddings: all)
    std::set<std::string> uniq(names.begin(), names.end());
    CHECK(uniq.size() == names.size());
    // count = sum of sizes; shaw tables are (2k+1, d) = (9, 4)
    std::size_t n = 0;
    for (auto& [nm, p] : model.named_parameters()) n += p.numel();
    CHECK(model.num_parameters() == n);
    CHECK(model.named_parameters()[1].second.shape() != Shape{});
}

TEST_CASE("nn/train_eval_mode_propagates", "[nn]") {
    nn::Transformer<float> model(tiny_config(), positions<float>({{"sinusoidal", {}}}));
    REQUIRE(model.training());
    model.eval();
    REQUIRE_FALSE(model.enc_layers[0]->self_attn->attn_drop->training());
    REQUIRE_FALSE(model.embed_drop->training());
    model.train();
    REQUIRE(model.dec_layers[0]->ffn->drop->training());
}

TEST_CASE("nn/xavier_and_embedding_init_scale", "[nn]") {
    Rng rng(1);
    nn::Linear<double> lin(200, 300, true, rng);
    const double a = std::sqrt(6.0 / 500.0);
    double mx = 0, s2 = 0;
    for (double v : lin.weight.value()) {
        mx = std::max(mx, std::abs(v));
        s2 += v * v;
    }
    REQUIRE(mx <= a);
    REQUIRE(std::sqrt(s2 / 60000.0) == Approx(a / std::sqrt(3.0)).epsilon(0.02));  // uniform std = a/sqrt(3)
    nn::Embedding<double> emb(1000, 64, true, rng);
    double e2 = 0;
    for (double v : emb.weight.value()) e2 += v * v;
    REQUIRE(std::sqrt(e2 / 64000.0) == Approx(1.0 / 8.0).epsilon(0.02));  // N(0, d^-1/2)
}
