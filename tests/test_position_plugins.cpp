// Checks of single position-encoding plug-ins (each TEST_CASE names its encoding): gradient checks, values
// against independent references (written here from the papers, not from the plug-ins), incremental decoding equal to
// full decoding, their registry / `relpos list` entries, and a toy encoding defined only in this file
// that a config names and `run_experiment` trains end to end (the plug-in path stays open).
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <algorithm>
#include <complex>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>

#include <yaml-cpp/yaml.h>

#include "experiments/tasks/task.hpp"
#include "experiments/run/experiment.hpp"
#include "experiments/run/sweep.hpp"
#include "experiments/train/model.hpp"
#include "nn/transformer.hpp"
#include "tests/nn_helpers.hpp"

using namespace relpos;
using namespace relpos::test;
using V = Var<double>;
using Spec = std::vector<std::pair<std::string, std::map<std::string, std::string>>>;
namespace fs = std::filesystem;

namespace {

// Gradient check of a tiny encoder-decoder loss with the given encodings, every parameter, central
// differences in double (as tests/test_position.cpp). encoder_only: the loss is the encoder memory
// (through a random projection) and the leaves are the parameters outside the decoder.
void check_model(const Spec& spec, std::size_t d_model = 4, std::size_t layers = 1, bool encoder_only = false) {
    auto cfg = tiny_config();
    cfg.dims.d_model = d_model;
    cfg.dims.heads = 2;
    cfg.dims.d_ff = 6;
    cfg.src_vocab = cfg.tgt_vocab = 6;
    cfg.encoder_layers = cfg.decoder_layers = layers;
    nn::Transformer<double> model(cfg, positions<double>(spec));
    std::vector<std::int32_t> src = {4, 5, 1, 4, 3, 0}, tgt_in = {2, 4, 5, 2, 5, 0};
    auto smask = model.padding_mask(src, 2, 3);
    std::vector<V> leaves;
    for (auto& [name, p] : model.named_parameters())
        if (!encoder_only || name.rfind("decoder.", 0) != 0) leaves.push_back(p);
    require_gradcheck(
        [&] {
            model.dropout_rng().reseed(7);
            V mem = model.encode(src, 2, 3, smask);  // (B, Ls, D)
            return encoder_only ? mem : model.decode(tgt_in, 2, 3, mem, smask);
        },
        leaves);
}

// The hooks of encoding `type` for one attention site.
struct Hooked {
    std::shared_ptr<nn::PositionEncoding<double>> pe;
    std::shared_ptr<nn::AttentionPosition<double>> hook;
};
Hooked hooks_for(const std::string& type, std::map<std::string, std::string> opts, nn::AttentionSite::Kind kind,
                 std::size_t heads, std::size_t head_dim) {
    static Rng rng(11);
    nn::MapOptions o(std::move(opts), "model.position");
    const nn::Side side = kind == nn::AttentionSite::EncoderSelf ? nn::Side::Encoder : nn::Side::Decoder;
    Hooked h;
    h.pe = nn::make_position<double>(type, o, {heads * head_dim, heads, side, &rng});
    h.hook = h.pe->for_attention({kind, 0, heads, head_dim}, rng);
    return h;
}

// The logit bias of a hook for queries (1, H, lq, .) at q_offset and lk keys, as (H, lq, lk) values.
Array<double> bias_of(nn::AttentionPosition<double>& hook, std::size_t heads, std::size_t lq, std::size_t lk,
                      std::size_t q_offset) {
    V q(zeros<double>({1, heads, lq, 4}));
    V b = hook.logit_bias(q, lk, q_offset);
    REQUIRE(b.defined());
    REQUIRE(b.numel() == heads * lq * lk);  // (1, H, Lq, Lk) or (H, Lq, Lk)
    Array<double> v = uninit<double>({heads, lq, lk});
    std::copy_n(b.data(), v.size(), v.data());
    return v;
}

}  // namespace

// ---------------------------------------------------------------- gradient checks
TEST_CASE("gradcheck/position/rope", "[gradcheck][position][plugin]") { check_model({{"rope", {}}}); }
TEST_CASE("gradcheck/position/rope_head_dim_4", "[gradcheck][position][plugin]") {
    check_model({{"rope", {{"base", "100"}}}}, 8);  // two frequencies per head
}
TEST_CASE("gradcheck/position/rope_cross_attention", "[gradcheck][position][plugin]") {
    check_model({{"rope", {{"cross_attention", "true"}}}});
}
TEST_CASE("gradcheck/position/alibi", "[gradcheck][position][plugin]") { check_model({{"alibi", {}}}); }
TEST_CASE("gradcheck/position/alibi_cross_attention", "[gradcheck][position][plugin]") {
    check_model({{"alibi", {{"cross_attention", "true"}}}});
    check_model({{"alibi", {{"cross_attention", "true"}, {"bidirectional", "symmetric"}}}});
}
// 4 buckets, max_distance 3: offsets ±1 and ±2 share buckets, so the gather's backward must add up.
TEST_CASE("gradcheck/position/t5_encoder", "[gradcheck][position][plugin]") {
    check_model({{"t5", {{"num_buckets", "4"}, {"max_distance", "3"}}}}, 4, 2, true);
}
TEST_CASE("gradcheck/position/t5_decoder", "[gradcheck][position][plugin]") {
    check_model({{"t5", {{"num_buckets", "4"}, {"max_distance", "3"}}}}, 4, 2);  // one table shared by 2 layers
}
TEST_CASE("gradcheck/position/t5_per_layer", "[gradcheck][position][plugin]") {
    check_model({{"t5", {{"num_buckets", "6"}, {"max_distance", "4"}, {"per_layer", "true"}}}}, 4, 2);
}
TEST_CASE("gradcheck/position/rope_plus_t5", "[gradcheck][position][plugin]") {
    check_model({{"rope", {}}, {"t5", {{"num_buckets", "4"}, {"max_distance", "3"}}}});
}

// KERPLE: r1, r2 per head and layer (exp of the stored log), in the logits of every self-attention layer.
TEST_CASE("gradcheck/position/kerple", "[gradcheck][position][plugin]") {
    check_model({{"kerple", {{"init", "uniform"}}}}, 4, 2);
}
TEST_CASE("gradcheck/position/kerple_cross_attention", "[gradcheck][position][plugin]") {
    check_model({{"kerple", {{"cross_attention", "true"}, {"init", "constant"}, {"r1_init", "0.7"}, {"r2_init", "3"}}}});
}
// FIRE with L = 1.5 so that queries at positions 0, 1 are normalised by L and the one at 2 by itself: the
// gradient of L and both branches of max(L, i) are checked. One function shared by 2 layers per side.
TEST_CASE("gradcheck/position/fire_encoder", "[gradcheck][position][plugin]") {
    check_model({{"fire", {{"hidden", "4"}, {"c_init", "0.7"}, {"L_init", "1.5"}}}}, 4, 2, true);
}
TEST_CASE("gradcheck/position/fire_decoder", "[gradcheck][position][plugin]") {
    check_model({{"fire", {{"hidden", "4"}, {"c_init", "0.7"}, {"L_init", "1.5"}}}}, 4, 2);
}
TEST_CASE("gradcheck/position/fire_per_layer", "[gradcheck][position][plugin]") {
    check_model({{"fire", {{"hidden", "3"}, {"L_init", "0.6"}, {"per_layer", "true"}}}}, 4, 2);
}
// learn_L: false: L a constant at L_init (no parameter); the others' gradients through both branches of max(L, i)
TEST_CASE("gradcheck/position/fire_fixed_L", "[gradcheck][position][plugin]") {
    check_model({{"fire", {{"hidden", "4"}, {"c_init", "0.7"}, {"L_init", "1.5"}, {"learn_L", "false"}}}}, 4, 2);
}
TEST_CASE("gradcheck/position/sinusoidal_plus_fire", "[gradcheck][position][plugin]") {
    check_model({{"sinusoidal", {}}, {"fire", {{"hidden", "4"}, {"L_init", "1.5"}}}});
}
// Transformer-XL: u, v (H, d) and W_R (D, D) per layer, through hook 2 (q + u) and hook 3 (the projected
// sinusoids of j - i, gathered by the bucketed kernel). Encoder only: bidirectional, distances of both signs;
// the whole model: the causal decoder too (its zero rows for later keys); cross_attention: t = j - i between
// target and source positions.
TEST_CASE("gradcheck/position/txl_encoder", "[gradcheck][position][plugin]") {
    check_model({{"txl", {}}}, 4, 2, true);
}
TEST_CASE("gradcheck/position/txl_decoder", "[gradcheck][position][plugin]") {
    check_model({{"txl", {{"max_time", "50"}}}}, 4, 2);
}
TEST_CASE("gradcheck/position/txl_cross_attention", "[gradcheck][position][plugin]") {
    check_model({{"txl", {{"cross_attention", "true"}}}});
}

// ---------------------------------------------------------------- rope against references
TEST_CASE("plugin/rope/hand_computed_rotation", "[position][plugin]") {
    // d = 4, base 10000: θ_0 = 1, θ_1 = 10000^(-2/4) = 0.01; x = (1, 2, 3, 4) at position 3
    auto [pe, hook] = hooks_for("rope", {}, nn::AttentionSite::EncoderSelf, 1, 4);
    REQUIRE(hook);
    Array<double> x = zeros<double>({1, 1, 1, 4});
    for (std::size_t c = 0; c < 4; ++c) x(0, 0, 0, c) = double(c + 1);
    V q(x), k(x);
    hook->queries_keys(q, k, 3, 0);
    const double a = 3.0, b = 0.03;
    CHECK(q.value()(0, 0, 0, 0) == Approx(1 * std::cos(a) - 2 * std::sin(a)));
    CHECK(q.value()(0, 0, 0, 1) == Approx(1 * std::sin(a) + 2 * std::cos(a)));
    CHECK(q.value()(0, 0, 0, 2) == Approx(3 * std::cos(b) - 4 * std::sin(b)));
    CHECK(q.value()(0, 0, 0, 3) == Approx(3 * std::sin(b) + 4 * std::cos(b)));
    for (std::size_t c = 0; c < 4; ++c) CHECK(k.value()(0, 0, 0, c) == x(0, 0, 0, c));  // position 0: no rotation
}

TEST_CASE("plugin/rope/matches_complex_rotation", "[position][plugin]") {
    // Independent reference: pair (x_2i, x_2i+1) as the complex number x_2i + i x_2i+1, times e^{i m θ_i}.
    const std::size_t B = 2, H = 2, L = 3, d = 8;
    const double base = 500.0;
    auto [pe, hook] = hooks_for("rope", {{"base", "500"}}, nn::AttentionSite::DecoderSelf, H, d);
    Array<double> xq = randn({B, H, L, d}, 1), xk = randn({B, H, L + 2, d}, 2);
    V q(xq), k(xk);
    hook->queries_keys(q, k, 7, 5);  // queries at 7.., keys at 5..
    auto check = [&](const Array<double>& in, const Array<double>& out, std::size_t offset, std::size_t len) {
        for (std::size_t b = 0; b < B; ++b)
            for (std::size_t h = 0; h < H; ++h)
                for (std::size_t p = 0; p < len; ++p)
                    for (std::size_t i = 0; i < d / 2; ++i) {
                        const double theta = std::pow(base, -2.0 * double(i) / double(d));
                        const std::complex<double> z =
                            std::complex<double>(in(b, h, p, 2 * i), in(b, h, p, 2 * i + 1)) *
                            std::polar(1.0, double(offset + p) * theta);
                        REQUIRE(out(b, h, p, 2 * i) == Approx(z.real()).margin(1e-13));
                        REQUIRE(out(b, h, p, 2 * i + 1) == Approx(z.imag()).margin(1e-13));
                    }
    };
    check(xq, q.value(), 7, L);
    check(xk, k.value(), 5, L + 2);
}

TEST_CASE("plugin/rope/score_depends_only_on_offset", "[position][plugin]") {
    // f(q, m)·f(k, n) is a function of n - m (RoFormer eq. 16)
    const Hooked h = hooks_for("rope", {}, nn::AttentionSite::EncoderSelf, 1, 8);
    auto& hook = h.hook;
    const Array<double> q0 = randn({1, 1, 1, 8}, 3), k0 = randn({1, 1, 1, 8}, 4);
    auto score = [&](std::size_t m, std::size_t n) {
        V q(q0), k(k0);
        hook->queries_keys(q, k, m, n);
        return sum(q * k).item();
    };
    std::vector<double> by_offset;
    for (long o : {-3L, 0L, 1L, 2L, 9L}) {
        const double ref = score(3, std::size_t(3 + o));
        by_offset.push_back(ref);
        for (std::size_t p : {0, 1, 5, 40, 1000})
            CHECK(score(p + 3, std::size_t(long(p) + 3 + o)) == Approx(ref).margin(1e-10));
    }
    CHECK(std::abs(by_offset[2] - by_offset[3]) > 1e-3);  // and it does depend on the offset
    // offset 0 leaves q·k unchanged; rotations keep norms
    double qk = 0;
    for (std::size_t c = 0; c < 8; ++c) qk += q0(0, 0, 0, c) * k0(0, 0, 0, c);
    CHECK(by_offset[1] == Approx(qk).margin(1e-12));
}

TEST_CASE("plugin/rope/scaling_at_evaluation", "[position][plugin]") {
    // Independent reference (complex rotation): an attention over `extent` = max(q_offset + Lq, k_offset + Lk)
    // positions past scaling_length S, s = extent / S, rotates the pair i at position m by
    //   linear: (m / s) θ_i  (position interpolation);   ntk: m θ_i s^(-2i/(d-2))  (base · s^(d/(d-2))).
    // At extent <= S both are the plain rotation, bit for bit.
    const std::size_t H = 2, d = 8;
    const double base = 10000.0;
    auto rotated = [&](const std::map<std::string, std::string>& opts, std::size_t lq, std::size_t lk,
                       std::size_t q_offset, std::size_t k_offset) {
        auto h = hooks_for("rope", opts, nn::AttentionSite::DecoderSelf, H, d);
        V q(randn({1, H, lq, d}, 1)), k(randn({1, H, lk, d}, 2));
        h.hook->queries_keys(q, k, q_offset, k_offset);
        return std::make_pair(q.value(), k.value());
    };
    auto expect = [&](const Array<double>& in, const Array<double>& out, std::size_t offset, double s, bool ntk) {
        for (std::size_t h = 0; h < H; ++h)
            for (std::size_t p = 0; p < in.shape()[2]; ++p)
                for (std::size_t i = 0; i < d / 2; ++i) {
                    const double theta = std::pow(base, -2.0 * double(i) / double(d));
                    const double m = double(offset + p);
                    const double angle = ntk ? m * theta * std::pow(s, -2.0 * double(i) / double(d - 2)) : m / s * theta;
                    const std::complex<double> z =
                        std::complex<double>(in(0, h, p, 2 * i), in(0, h, p, 2 * i + 1)) * std::polar(1.0, angle);
                    REQUIRE(out(0, h, p, 2 * i) == Approx(z.real()).margin(1e-12));
                    REQUIRE(out(0, h, p, 2 * i + 1) == Approx(z.imag()).margin(1e-12));
                }
    };
    const Array<double> xq = randn({1, H, 12, d}, 1), xk = randn({1, H, 12, d}, 2);
    for (const std::string kind : {"linear", "ntk"}) {
        INFO(kind);
        const std::map<std::string, std::string> o{{"scaling", kind}, {"scaling_length", "4"}};
        // 12 positions, 3x the scaling length: s = 3
        auto [q, k] = rotated(o, 12, 12, 0, 0);
        expect(xq, q, 0, 3.0, kind == "ntk");
        expect(xk, k, 0, 3.0, kind == "ntk");
        // queries at 4..5 against keys 0..9: the attention's extent, 10, sets s = 2.5 for both
        auto [q2, k2] = rotated(o, 2, 10, 4, 0);
        expect(randn({1, H, 2, d}, 1), q2, 4, 2.5, kind == "ntk");
        expect(randn({1, H, 10, d}, 2), k2, 0, 2.5, kind == "ntk");
        // within the scaling length: the plain rotation, bit for bit
        auto [q3, k3] = rotated(o, 4, 4, 0, 0);
        auto [p3, pk3] = rotated({}, 4, 4, 0, 0);
        CHECK(std::equal(q3.begin(), q3.end(), p3.begin()));
        CHECK(std::equal(k3.begin(), k3.end(), pk3.begin()));
    }
    // ntk keeps the highest frequency (pair 0) and interpolates the lowest (pair d/2 - 1) as linear does
    auto [qn, kn] = rotated({{"scaling", "ntk"}, {"scaling_length", "4"}}, 12, 12, 0, 0);
    auto [ql, kl] = rotated({{"scaling", "linear"}, {"scaling_length", "4"}}, 12, 12, 0, 0);
    auto [qp, kp] = rotated({}, 12, 12, 0, 0);
    CHECK(qn(0, 1, 7, 0) == Approx(qp(0, 1, 7, 0)).margin(1e-12));
    CHECK(qn(0, 1, 7, d - 1) == Approx(ql(0, 1, 7, d - 1)).margin(1e-12));
    CHECK(std::abs(qn(0, 1, 7, d - 1) - qp(0, 1, 7, d - 1)) > 1e-6);
    // the options: evaluation only, left out of run names at their defaults, and refused without a length
    bool eval_only = false, named = false;
    for (const auto& doc : nn::describe_position_options("rope"))
        if (doc.key == "scaling") eval_only = doc.evaluation_only, named = doc.omit_from_run_name_at == "none";
    CHECK(eval_only);
    CHECK(named);
    CHECK_THROWS_WITH(hooks_for("rope", {{"scaling", "ntk"}}, nn::AttentionSite::DecoderSelf, H, d),
                      Catch::Contains("set scaling_length: N"));
    CHECK_THROWS_WITH(hooks_for("rope", {{"scaling", "ntk"}, {"scaling_length", "4"}}, nn::AttentionSite::DecoderSelf, 1, 2),
                      Catch::Contains("undefined for a head dimension of 2"));
    CHECK_THROWS_WITH(hooks_for("rope", {{"scaling", "log"}}, nn::AttentionSite::DecoderSelf, H, d),
                      Catch::Contains("scaling"));
}

TEST_CASE("plugin/rope/sites_and_errors", "[position][plugin][errors]") {
    CHECK_FALSE(hooks_for("rope", {}, nn::AttentionSite::Cross, 2, 4).hook);
    CHECK(hooks_for("rope", {}, nn::AttentionSite::EncoderSelf, 2, 4).hook);
    CHECK(hooks_for("rope", {}, nn::AttentionSite::DecoderSelf, 2, 4).hook);
    auto cross = hooks_for("rope", {{"cross_attention", "true"}}, nn::AttentionSite::Cross, 2, 4);
    REQUIRE(cross.hook);
    // cached memory keys (undefined k): only the queries turn
    V q(randn({1, 2, 1, 4}, 5)), no_k;
    const Array<double> q_before = q.value();
    cross.hook->queries_keys(q, no_k, 2, 0);
    CHECK_FALSE(no_k.defined());
    CHECK(q.value()(0, 0, 0, 0) != q_before(0, 0, 0, 0));
    CHECK(cross.pe->parameters().empty());

    Rng rng(1);
    nn::MapOptions odd;
    CHECK_THROWS_WITH(nn::make_position<float>("rope", odd, {6, 2, nn::Side::Encoder, &rng}),
                      Catch::Contains("head dimension") && Catch::Contains("= 3") && Catch::Contains("even"));
    nn::MapOptions bad_base(std::map<std::string, std::string>{{"base", "1"}});
    CHECK_THROWS_WITH(nn::make_position<float>("rope", bad_base, {8, 2, nn::Side::Encoder, &rng}),
                      Catch::Contains("'base'"));
}

// ---------------------------------------------------------------- alibi against references
TEST_CASE("plugin/alibi/slopes", "[position][plugin]") {
    // The paper: 8 heads -> 1/2, 1/4, ..., 1/256. Other head counts (reference code's get_slopes): the
    // slopes of the closest lower power of two p, then m_1, m_3, ... of 2p.
    const std::map<std::size_t, std::vector<double>> expected = {
        {8, {1. / 2, 1. / 4, 1. / 8, 1. / 16, 1. / 32, 1. / 64, 1. / 128, 1. / 256}},
        {6, {1. / 4, 1. / 16, 1. / 64, 1. / 256, 1. / 2, 1. / 8}},
        {3, {1. / 16, 1. / 256, 1. / 4}},
        {1, {1. / 256}},
        {2, {1. / 16, 1. / 256}},
        {12, {1. / 2, 1. / 4, 1. / 8, 1. / 16, 1. / 32, 1. / 64, 1. / 128, 1. / 256, std::pow(2.0, -0.5),
              std::pow(2.0, -1.5), std::pow(2.0, -2.5), std::pow(2.0, -3.5)}},
    };
    for (auto& [H, m] : expected) {
        auto [pe, hook] = hooks_for("alibi", {{"bidirectional", "symmetric"}}, nn::AttentionSite::EncoderSelf, H, 4);
        REQUIRE(hook);
        const Array<double> b = bias_of(*hook, H, 1, 2, 1);  // query at 1, keys at 0 and 1
        for (std::size_t h = 0; h < H; ++h) {
            INFO(H << " heads, head " << h);
            CHECK(b(h, 0, 0) == Approx(-m[h]).epsilon(1e-15));
            CHECK(b(h, 0, 1) == 0.0);
        }
    }
}

TEST_CASE("plugin/alibi/bias_values", "[position][plugin]") {
    // 2 heads: m = 1/16, 1/256
    const double m0 = 1. / 16, m1 = 1. / 256;
    SECTION("encoder, bidirectional: symmetric: -m |i - j|") {
        auto [pe, hook] = hooks_for("alibi", {{"bidirectional", "symmetric"}}, nn::AttentionSite::EncoderSelf, 2, 4);
        const Array<double> b = bias_of(*hook, 2, 3, 4, 0);
        const double dist[3][4] = {{0, 1, 2, 3}, {1, 0, 1, 2}, {2, 1, 0, 1}};
        for (std::size_t i = 0; i < 3; ++i)
            for (std::size_t j = 0; j < 4; ++j) {
                CHECK(b(0, i, j) == Approx(-m0 * dist[i][j]));
                CHECK(b(1, i, j) == Approx(-m1 * dist[i][j]));
            }
    }
    SECTION("encoder, by default (bidirectional: offset): -m |i - j| + 0.5 m for keys left of the query") {
        // Ruoss et al. 2023's reference: alibi = -|i - j| + 0.5 * tri(k = -1), times the slopes
        auto [pe, hook] = hooks_for("alibi", {}, nn::AttentionSite::EncoderSelf, 2, 4);
        const Array<double> b = bias_of(*hook, 2, 3, 4, 0);
        const double want[3][4] = {{0, -1, -2, -3}, {-0.5, 0, -1, -2}, {-1.5, -0.5, 0, -1}};
        for (std::size_t i = 0; i < 3; ++i)
            for (std::size_t j = 0; j < 4; ++j) {
                CHECK(b(0, i, j) == Approx(m0 * want[i][j]));
                CHECK(b(1, i, j) == Approx(m1 * want[i][j]));
            }
        // the left and the right neighbour now differ (the symmetric form cannot tell them apart)
        CHECK(b(0, 1, 0) != Approx(b(0, 1, 2)));
    }
    SECTION("decoder: -m (i - j) for j <= i, 0 for (masked) future keys") {
        auto [pe, hook] = hooks_for("alibi", {}, nn::AttentionSite::DecoderSelf, 2, 4);
        const Array<double> full = bias_of(*hook, 2, 3, 3, 0);
        const double want[3][3] = {{0, 0, 0}, {-1, 0, 0}, {-2, -1, 0}};
        for (std::size_t i = 0; i < 3; ++i)
            for (std::size_t j = 0; j < 3; ++j) CHECK(full(0, i, j) == Approx(m0 * want[i][j]));
        // one incremental step: the query at position 3 against the 4 cached keys
        const Array<double> step = bias_of(*hook, 2, 1, 4, 3);
        for (std::size_t j = 0; j < 4; ++j) {
            CHECK(step(0, 0, j) == Approx(-m0 * double(3 - j)));
            CHECK(step(1, 0, j) == Approx(-m1 * double(3 - j)));
        }
    }
    SECTION("no hook in encoder-decoder attention by default, no parameters") {
        CHECK_FALSE(hooks_for("alibi", {}, nn::AttentionSite::Cross, 2, 4).hook);
        auto cross = hooks_for("alibi", {{"cross_attention", "true"}}, nn::AttentionSite::Cross, 2, 4);
        REQUIRE(cross.hook);
        CHECK(bias_of(*cross.hook, 2, 1, 3, 0)(0, 0, 2) == Approx(-2 * m0));  // bidirectional there
        CHECK(bias_of(*cross.hook, 2, 2, 3, 0)(0, 1, 0) == Approx(-0.5 * m0));
        CHECK(cross.pe->parameters().empty());
        CHECK(cross.hook->parameters().empty());
    }
}

// ---------------------------------------------------------------- t5 against references
namespace {
// Offsets j - i -> bucket, worked out by hand from T5's formula for 32 buckets, max_distance 128:
// bidirectional: 16 buckets per direction, exact below 8, else 8 + floor(log(r/8) / log(16) * 8)
//   (= 8 + floor(2 log2(r/8)), at most 15), keys after the query + 16;
// causal: offsets > 0 -> 0, exact below 16, else 16 + floor(log(r/16) / log(8) * 16), at most 31.
const std::vector<std::pair<long, long>> kBidirectional = {
    {0, 0},     {-1, 1},    {-7, 7},    {-8, 8},    {-11, 8},   {-12, 9},   {-16, 10},  {-22, 10},  {-23, 11},
    {-32, 12},  {-45, 12},  {-46, 13},  {-64, 14},  {-90, 14},  {-91, 15},  {-127, 15}, {-128, 15}, {-200, 15},
    {1, 17},    {7, 23},    {8, 24},    {12, 25},   {16, 26},   {23, 27},   {64, 30},   {90, 30},   {91, 31},
    {128, 31},  {200, 31}};
const std::vector<std::pair<long, long>> kCausal = {
    {200, 0},  {5, 0},    {1, 0},    {0, 0},    {-1, 1},   {-15, 15},  {-16, 16},  {-18, 16},
    {-19, 17}, {-32, 21}, {-64, 26}, {-100, 30}, {-127, 31}, {-128, 31}, {-200, 31}};

// Bucket of every offset -200 .. 200 as the t5 plug-in computes it: set table[b, h] = b + 1000 h and
// read the bias of a query at position 200 against keys 0 .. 400.
std::map<long, long> buckets_of(nn::AttentionSite::Kind kind, std::map<std::string, std::string> opts = {}) {
    auto [pe, hook] = hooks_for("t5", std::move(opts), kind, 2, 4);
    REQUIRE(hook);
    auto named = pe->named_parameters();
    REQUIRE(named.size() == 1);
    CHECK(named[0].first == "relative_attention_bias");
    Array<double>& table = named[0].second.value();  // (buckets, H)
    for (std::size_t b = 0; b < table.shape()[0]; ++b)
        for (std::size_t h = 0; h < 2; ++h) table(b, h) = double(b) + 1000.0 * double(h);
    const Array<double> bias = bias_of(*hook, 2, 1, 401, 200);
    std::map<long, long> out;
    for (long o = -200; o <= 200; ++o) {
        const double v = bias(0, 0, std::size_t(o + 200));
        REQUIRE(bias(1, 0, std::size_t(o + 200)) == v + 1000.0);
        out[o] = long(v);
    }
    return out;
}
}  // namespace

TEST_CASE("plugin/t5/buckets_bidirectional", "[position][plugin]") {
    auto b = buckets_of(nn::AttentionSite::EncoderSelf);
    for (auto [offset, bucket] : kBidirectional) {
        INFO("offset " << offset);
        CHECK(b.at(offset) == bucket);
    }
    for (long o = -199; o <= 200; ++o) {  // within each direction, non-decreasing in distance
        if (o == 1) continue;
        if (o <= 0) CHECK(b[o] <= b[o - 1]);
        if (o > 1) CHECK(b[o] >= b[o - 1]);
    }
}

TEST_CASE("plugin/t5/buckets_causal", "[position][plugin]") {
    auto b = buckets_of(nn::AttentionSite::DecoderSelf);
    for (auto [offset, bucket] : kCausal) {
        INFO("offset " << offset);
        CHECK(b.at(offset) == bucket);
    }
    // smaller sizes: 8 buckets, max_distance 20 -> exact below 4, then 4 + floor(log(r/4) / log(5) * 4)
    auto s = buckets_of(nn::AttentionSite::DecoderSelf, {{"num_buckets", "8"}, {"max_distance", "20"}});
    const std::vector<std::pair<long, long>> small = {{-3, 3}, {-4, 4}, {-6, 5}, {-7, 5}, {-8, 5},
                                                      {-9, 6}, {-13, 6}, {-14, 7}, {-100, 7}};
    for (auto [offset, bucket] : small) {
        INFO("offset " << offset);
        CHECK(s.at(offset) == bucket);
    }
}

TEST_CASE("plugin/t5/sharing_and_errors", "[position][plugin][errors]") {
    auto cfg = tiny_config();
    cfg.encoder_layers = cfg.decoder_layers = 2;
    auto names_of = [&](const Spec& spec) {
        nn::Transformer<double> m(cfg, positions<double>(spec));
        std::vector<std::string> out;
        for (auto& [n, p] : m.named_parameters())
            if (n.find("relative_attention_bias") != std::string::npos) out.push_back(n);
        return out;
    };
    CHECK(names_of({{"t5", {}}}) ==
          std::vector<std::string>{"encoder.position.relative_attention_bias", "decoder.position.relative_attention_bias"});
    CHECK(names_of({{"t5", {{"per_layer", "true"}}}}) ==
          std::vector<std::string>{"encoder.layers.0.self_attn.relative_attention_bias",
                                   "encoder.layers.1.self_attn.relative_attention_bias",
                                   "decoder.layers.0.self_attn.relative_attention_bias",
                                   "decoder.layers.1.self_attn.relative_attention_bias"});
    CHECK_FALSE(hooks_for("t5", {}, nn::AttentionSite::Cross, 2, 4).hook);

    Rng rng(1);
    nn::PositionContext ctx{8, 2, nn::Side::Decoder, &rng};
    nn::MapOptions o1(std::map<std::string, std::string>{{"max_distance", "16"}});
    CHECK_THROWS_WITH(nn::make_position<float>("t5", o1, ctx),
                      Catch::Contains("'max_distance'") && Catch::Contains("num_buckets / 2 = 16") &&
                          Catch::Contains("got 16"));
    nn::MapOptions o2(std::map<std::string, std::string>{{"num_buckets", "2"}});
    CHECK_THROWS_WITH(nn::make_position<float>("t5", o2, ctx), Catch::Contains("'num_buckets'"));
    nn::MapOptions o3(std::map<std::string, std::string>{{"num_bucket", "8"}});
    CHECK_THROWS_WITH(nn::make_position<float>("t5", o3, ctx), Catch::Contains("did you mean 'num_buckets'"));
}

// ---------------------------------------------------------------- kerple against references
namespace {
// The named parameter `name` of a module, which must exist.
Array<double>& param(const nn::Module<double>& m, const std::string& name) {
    for (auto& [n, p] : m.named_parameters())
        if (n == name) return p.value();
    FAIL("no parameter " << name);
    throw std::logic_error("unreachable");
}
}  // namespace

TEST_CASE("plugin/kerple/bias_values", "[position][plugin]") {
    // b_h(i, j) = -r1_h log(1 + r2_h |i - j|), with r1 = (0.5, 2), r2 = (3, 0.25) set through the stored logs
    const double r1[2] = {0.5, 2.0}, r2[2] = {3.0, 0.25};
    auto set = [&](nn::AttentionPosition<double>& hook) {
        for (std::size_t h = 0; h < 2; ++h) {
            param(hook, "kerple_log_r1")(h) = std::log(r1[h]);
            param(hook, "kerple_log_r2")(h) = std::log(r2[h]);
        }
    };
    auto want = [&](std::size_t h, double dist) { return -r1[h] * std::log(1.0 + r2[h] * dist); };
    SECTION("encoder: |i - j|") {
        auto [pe, hook] = hooks_for("kerple", {}, nn::AttentionSite::EncoderSelf, 2, 4);
        REQUIRE(hook);
        set(*hook);
        const Array<double> b = bias_of(*hook, 2, 3, 5, 0);
        for (std::size_t h = 0; h < 2; ++h)
            for (std::size_t i = 0; i < 3; ++i)
                for (std::size_t j = 0; j < 5; ++j)
                    CHECK(b(h, i, j) == Approx(want(h, std::abs(double(i) - double(j)))).epsilon(1e-14));
        CHECK(b(0, 1, 3) == Approx(-0.5 * std::log(7.0)));  // by hand: 1 + 3 * 2
    }
    SECTION("decoder: i - j for j <= i, 0 for (masked) future keys; an incremental step is a row") {
        auto [pe, hook] = hooks_for("kerple", {}, nn::AttentionSite::DecoderSelf, 2, 4);
        set(*hook);
        const Array<double> full = bias_of(*hook, 2, 4, 4, 0);
        const Array<double> step = bias_of(*hook, 2, 1, 4, 3);
        for (std::size_t h = 0; h < 2; ++h)
            for (std::size_t i = 0; i < 4; ++i)
                for (std::size_t j = 0; j < 4; ++j) {
                    CHECK(full(h, i, j) == Approx(j > i ? 0.0 : want(h, double(i - j))).epsilon(1e-14));
                    if (i == 3) CHECK(step(h, 0, j) == full(h, 3, j));
                }
    }
    SECTION("r2 -> 0 is ALiBi with slope r1 r2; large r2 is nearly logarithmic") {
        auto [pe, hook] = hooks_for("kerple", {}, nn::AttentionSite::EncoderSelf, 2, 4);
        param(*hook, "kerple_log_r1")(0) = std::log(1e6);
        param(*hook, "kerple_log_r2")(0) = std::log(1e-6);  // -r1 log(1 + r2 d) ~ -r1 r2 d = -d
        const Array<double> b = bias_of(*hook, 2, 1, 20, 0);
        for (std::size_t j = 0; j < 20; ++j) CHECK(b(0, 0, j) == Approx(-double(j)).epsilon(1e-4));
    }
}

TEST_CASE("plugin/kerple/parameters_init_and_sites", "[position][plugin][errors]") {
    auto cfg = tiny_config();
    cfg.encoder_layers = 2;
    cfg.decoder_layers = 1;
    auto names_of = [&](const Spec& spec) {
        nn::Transformer<double> m(cfg, positions<double>(spec));
        std::vector<std::string> out;
        for (auto& [n, p] : m.named_parameters())
            if (n.find("kerple") != std::string::npos) {
                out.push_back(n);
                CHECK(shape_of(p.value()) == Shape{2});  // one value per head
            }
        return out;
    };
    CHECK(names_of({{"kerple", {}}}) ==
          std::vector<std::string>{"encoder.layers.0.self_attn.kerple_log_r1", "encoder.layers.0.self_attn.kerple_log_r2",
                                   "encoder.layers.1.self_attn.kerple_log_r1", "encoder.layers.1.self_attn.kerple_log_r2",
                                   "decoder.layers.0.self_attn.kerple_log_r1", "decoder.layers.0.self_attn.kerple_log_r2"});
    CHECK(names_of({{"kerple", {{"cross_attention", "true"}}}}).size() == 8);  // + decoder.layers.0.cross_attn.*
    CHECK_FALSE(hooks_for("kerple", {}, nn::AttentionSite::Cross, 2, 4).hook);

    // init: uniform draws r1 in [0.01, r1_init], r2 in [0.01, r2_init] per head (the reference code's
    // rand() * scale clamped at 0.01); constant puts every head at the values
    auto uni = hooks_for("kerple", {{"r1_init", "3"}, {"r2_init", "0.5"}}, nn::AttentionSite::EncoderSelf, 16, 4);
    const Array<double> u1 = xt::exp(param(*uni.hook, "kerple_log_r1")), u2 = xt::exp(param(*uni.hook, "kerple_log_r2"));
    for (std::size_t h = 0; h < 16; ++h) {
        CHECK((u1(h) >= 0.01 && u1(h) <= 3.0));
        CHECK((u2(h) >= 0.01 && u2(h) <= 0.5));
    }
    CHECK(xt::amax(u1)() - xt::amin(u1)() > 0.3);  // the heads differ
    auto cst = hooks_for("kerple", {{"init", "constant"}, {"r1_init", "3"}}, nn::AttentionSite::DecoderSelf, 4, 4);
    for (std::size_t h = 0; h < 4; ++h) {
        CHECK(std::exp(param(*cst.hook, "kerple_log_r1")(h)) == Approx(3.0));
        CHECK(std::exp(param(*cst.hook, "kerple_log_r2")(h)) == Approx(1.0));
    }

    Rng rng(1);
    nn::PositionContext ctx{8, 2, nn::Side::Decoder, &rng};
    nn::MapOptions o1(std::map<std::string, std::string>{{"r1_init", "0"}});
    CHECK_THROWS_WITH(nn::make_position<float>("kerple", o1, ctx), Catch::Contains("'r1_init'"));
    nn::MapOptions o2(std::map<std::string, std::string>{{"init", "zeros"}});
    CHECK_THROWS_WITH(nn::make_position<float>("kerple", o2, ctx), Catch::Contains("'init'") && Catch::Contains("uniform"));
}

// ---------------------------------------------------------------- fire against references
namespace {
// FIRE's bias for one (query position i, key position j), written from the paper's formula with plain
// loops: f(sign(i - j) ψ(|i - j|) / ψ(max(L, i))), ψ(x) = log(c x + 1), f = Linear, ReLU, Linear.
struct FireRef {
    double c, L;
    Array<double> w1, b1, w2, b2;  // (1, n), (n,), (n, H), (H,)
    double operator()(std::size_t h, double i, double j) const {
        const double d = std::abs(i - j), s = i > j ? 1.0 : i < j ? -1.0 : 0.0;
        const double x = s * std::log(c * d + 1.0) / std::log(c * std::max(L, i) + 1.0);
        double out = b2(h);
        for (std::size_t k = 0; k < b1.size(); ++k) out += std::max(0.0, x * w1(0, k) + b1(k)) * w2(k, h);
        return out;
    }
};
FireRef fire_ref(const nn::Module<double>& owner, const std::string& prefix = "") {
    return {std::exp(param(owner, prefix + "log_c")(0)), std::exp(param(owner, prefix + "log_L")(0)),
            param(owner, prefix + "fc1.weight"), param(owner, prefix + "fc1.bias"), param(owner, prefix + "fc2.weight"),
            param(owner, prefix + "fc2.bias")};
}
}  // namespace

TEST_CASE("plugin/fire/bias_values", "[position][plugin]") {
    const std::map<std::string, std::string> opts = {{"hidden", "5"}, {"c_init", "0.3"}, {"L_init", "4.5"}};
    SECTION("decoder: queries below L normalised by L, later ones by their own position; a step is a row") {
        auto [pe, hook] = hooks_for("fire", opts, nn::AttentionSite::DecoderSelf, 3, 4);
        REQUIRE(hook);
        const FireRef ref = fire_ref(*pe);  // shared: the parameters sit on the encoding
        CHECK(ref.c == Approx(0.3));
        CHECK(ref.L == Approx(4.5));
        const Array<double> full = bias_of(*hook, 3, 9, 9, 0);
        for (std::size_t h = 0; h < 3; ++h)
            for (std::size_t i = 0; i < 9; ++i)
                for (std::size_t j = 0; j <= i; ++j) {  // future keys are masked
                    INFO("head " << h << " query " << i << " key " << j);
                    CHECK(full(h, i, j) == Approx(ref(h, double(i), double(j))).epsilon(1e-13));
                }
        for (std::size_t t : {2, 7}) {
            const Array<double> step = bias_of(*hook, 3, 1, t + 1, t);
            for (std::size_t h = 0; h < 3; ++h)
                for (std::size_t j = 0; j <= t; ++j) CHECK(step(h, 0, j) == full(h, t, j));
        }
        // progressive interpolation: beyond L the input is ψ(i - j) / ψ(i), so the key at distance 0 and the
        // first key always get the inputs 0 and 1, whatever the query position
        for (std::size_t h = 0; h < 3; ++h) {
            CHECK(full(h, 5, 0) == Approx(full(h, 8, 0)).epsilon(1e-13));
            CHECK(full(h, 5, 5) == Approx(full(h, 8, 8)).epsilon(1e-13));
        }
    }
    SECTION("encoder: keys after the query get the negated input") {
        auto [pe, hook] = hooks_for("fire", opts, nn::AttentionSite::EncoderSelf, 2, 4);
        const FireRef ref = fire_ref(*pe);
        const Array<double> b = bias_of(*hook, 2, 6, 7, 0);
        for (std::size_t h = 0; h < 2; ++h)
            for (std::size_t i = 0; i < 6; ++i)
                for (std::size_t j = 0; j < 7; ++j) CHECK(b(h, i, j) == Approx(ref(h, double(i), double(j))).epsilon(1e-13));
        CHECK(std::abs(b(0, 2, 1) - b(0, 2, 3)) > 1e-6);  // left and right differ
    }
    SECTION("per_layer: each layer's own function") {
        auto per = opts;
        per["per_layer"] = "true";
        auto [pe, hook] = hooks_for("fire", per, nn::AttentionSite::DecoderSelf, 2, 4);
        CHECK(pe->parameters().empty());
        const FireRef ref = fire_ref(*hook, "fire.");
        const Array<double> b = bias_of(*hook, 2, 1, 7, 6);
        for (std::size_t h = 0; h < 2; ++h)
            for (std::size_t j = 0; j < 7; ++j) CHECK(b(h, 0, j) == Approx(ref(h, 6.0, double(j))).epsilon(1e-13));
    }
}

TEST_CASE("plugin/fire/sharing_sites_and_errors", "[position][plugin][errors]") {
    auto cfg = tiny_config();
    cfg.encoder_layers = cfg.decoder_layers = 2;
    auto names_of = [&](const Spec& spec) {
        nn::Transformer<double> m(cfg, positions<double>(spec));
        std::vector<std::string> out;
        for (auto& [n, p] : m.named_parameters())
            if (n.find("position.fc1.") != std::string::npos || n.find("fire.fc1.") != std::string::npos ||
                n.find("log_L") != std::string::npos)
                if (n.find(".bias") == std::string::npos) out.push_back(n);
        return out;
    };
    CHECK(names_of({{"fire", {}}}) ==
          std::vector<std::string>{"encoder.position.log_L", "encoder.position.fc1.weight", "decoder.position.log_L",
                                   "decoder.position.fc1.weight"});
    CHECK(names_of({{"fire", {{"per_layer", "true"}}}}).size() == 8);  // 4 self-attention layers
    CHECK(names_of({{"fire", {{"per_layer", "true"}}}})[0] == "encoder.layers.0.self_attn.fire.log_L");
    // learn_L: false: no log_L parameter anywhere, the rest as before (same names, same initial draws)
    CHECK(names_of({{"fire", {{"learn_L", "false"}}}}) ==
          std::vector<std::string>{"encoder.position.fc1.weight", "decoder.position.fc1.weight"});
    CHECK(names_of({{"fire", {{"learn_L", "false"}, {"per_layer", "true"}}}}).size() == 4);
    {
        // the bias is the formula's with L = L_init, held as a constant
        auto [pe, hook] = hooks_for("fire", {{"hidden", "5"}, {"c_init", "0.3"}, {"L_init", "4.5"}, {"learn_L", "false"}},
                                    nn::AttentionSite::DecoderSelf, 3, 4);
        CHECK(pe->parameters().size() == 5);  // log_c and the MLP's four
        const FireRef ref{std::exp(param(*pe, "log_c")(0)), 4.5, param(*pe, "fc1.weight"), param(*pe, "fc1.bias"),
                          param(*pe, "fc2.weight"), param(*pe, "fc2.bias")};
        const Array<double> b = bias_of(*hook, 3, 9, 9, 0);
        for (std::size_t h = 0; h < 3; ++h)
            for (std::size_t i = 0; i < 9; ++i)
                for (std::size_t j = 0; j <= i; ++j) CHECK(b(h, i, j) == Approx(ref(h, double(i), double(j))).epsilon(1e-13));
        nn::MapOptions bad(std::map<std::string, std::string>{{"learn_L", "maybe"}});
        Rng r(1);
        nn::PositionContext c{8, 2, nn::Side::Decoder, &r};
        CHECK_THROWS_WITH(nn::make_position<float>("fire", bad, c), Catch::Contains("'learn_L'"));
    }
    CHECK_FALSE(hooks_for("fire", {}, nn::AttentionSite::Cross, 2, 4).hook);
    {
        // defaults: c = 0.1, L = 512, 32 hidden units; MLP init as torch.nn.Linear, U(±1/sqrt(fan_in))
        auto [pe, hook] = hooks_for("fire", {}, nn::AttentionSite::EncoderSelf, 4, 4);
        CHECK(std::exp(param(*pe, "log_c")(0)) == Approx(0.1));
        CHECK(std::exp(param(*pe, "log_L")(0)) == Approx(512.0));
        CHECK(shape_of(param(*pe, "fc1.weight")) == Shape{1, 32});
        CHECK(shape_of(param(*pe, "fc2.weight")) == Shape{32, 4});
        CHECK(xt::amax(xt::abs(param(*pe, "fc1.bias")))() <= 1.0);
        CHECK(xt::amax(xt::abs(param(*pe, "fc1.bias")))() > 0.1);  // not zeros: the ReLU kinks are spread out
        CHECK(xt::amax(xt::abs(param(*pe, "fc2.weight")))() <= 1.0 / std::sqrt(32.0));
    }

    Rng rng(1);
    nn::PositionContext ctx{8, 2, nn::Side::Decoder, &rng};
    nn::MapOptions o1(std::map<std::string, std::string>{{"cross_attention", "true"}});
    CHECK_THROWS_WITH(nn::make_position<float>("fire", o1, ctx),
                      Catch::Contains("'cross_attention'") && Catch::Contains("self-attention only"));
    nn::MapOptions o2(std::map<std::string, std::string>{{"cross_attention", "false"}});
    CHECK_NOTHROW(nn::make_position<float>("fire", o2, ctx));
    nn::MapOptions o3(std::map<std::string, std::string>{{"c_init", "0"}});
    CHECK_THROWS_WITH(nn::make_position<float>("fire", o3, ctx), Catch::Contains("'c_init'"));
    nn::MapOptions o4(std::map<std::string, std::string>{{"hiden", "8"}});
    CHECK_THROWS_WITH(nn::make_position<float>("fire", o4, ctx), Catch::Contains("did you mean 'hidden'"));
}

// ---------------------------------------------------------------- txl against a brute-force computation
namespace {
// Transformer-XL's logit written from the formula with plain loops, for head h, query i at absolute position
// pi and key j at position pj (Dai et al. 2019 sec. 3.3, the layout and sign of Ruoss et al.'s reference):
//   e = [ (q + u_h)·k + (q + v_h)·(W_R r_{pj - pi})_h ] / sqrt(d),
//   r_t = (sin(t w_0), .., sin(t w_{D/2-1}), cos(t w_0), .., cos(t w_{D/2-1})),  w_m = max_time^(-2m/D).
// q, k are the raw (unscaled) head vectors; W_R is (in, out): (W_R r)[c] = sum_m r[m] W[m][c].
struct TxlRef {
    Array<double> u, v, w;  // (H, d), (H, d), (D, D)
    double max_time;
    double operator()(std::size_t h, const double* q, const double* k, long pi, long pj) const {
        const std::size_t d = u.shape()[1], D = w.shape()[0];
        std::vector<double> r(D);
        for (std::size_t m = 0; m < D / 2; ++m) {
            const double a = double(pj - pi) * std::pow(max_time, -2.0 * double(m) / double(D));
            r[m] = std::sin(a);
            r[D / 2 + m] = std::cos(a);
        }
        double content = 0, position = 0;
        for (std::size_t c = 0; c < d; ++c) {
            double wr = 0;
            for (std::size_t m = 0; m < D; ++m) wr += r[m] * w(m, h * d + c);
            content += (q[c] + u(h, c)) * k[c];
            position += (q[c] + v(h, c)) * wr;
        }
        return (content + position) / std::sqrt(double(d));
    }
};

// The logits of one attention site as attention computes them: q scaled by 1/sqrt(d), hook 2, q·kᵀ, hook 3.
// Also checks that the fused add equals logits + logit_bias (the interface's rule).
Array<double> txl_logits(nn::AttentionPosition<double>& hook, const Array<double>& q_raw, const Array<double>& k_raw,
                         std::size_t q_offset) {
    const double s = 1.0 / std::sqrt(double(q_raw.shape()[3]));
    V q(Array<double>(q_raw * s)), k(k_raw);
    hook.queries_keys(q, k, q_offset, 0);
    const V qk = matmul(q, k, false, true);
    const Array<double> fused = hook.add_logit_bias(qk, q, q_offset).value();
    const Array<double> plain = (qk + hook.logit_bias(q, k_raw.shape()[2], q_offset)).value();
    REQUIRE(shape_of(fused) == shape_of(plain));
    for (std::size_t x = 0; x < fused.size(); ++x) REQUIRE(fused.data()[x] == Approx(plain.data()[x]).epsilon(1e-14));
    return fused;
}
}  // namespace

TEST_CASE("plugin/txl/logits_against_brute_force", "[position][plugin]") {
    const std::size_t B = 2, H = 2, d = 4, D = H * d;
    // Non-trivial parameters: u, v and W_R from a fixed seed, large enough that every term matters.
    auto setup = [&](nn::AttentionPosition<double>& hook, double max_time) {
        param(hook, "txl_u") = randn<double>({H, d}, 21, 0.7);
        param(hook, "txl_v") = randn<double>({H, d}, 22, 0.7);
        param(hook, "txl_w_r") = randn<double>({D, D}, 23, 1.0 / std::sqrt(double(D)));
        return TxlRef{param(hook, "txl_u"), param(hook, "txl_v"), param(hook, "txl_w_r"), max_time};
    };
    // want(b, h, i, j) for queries at q_offset + i, keys at j
    auto check = [&](const Array<double>& got, const TxlRef& ref, const Array<double>& q, const Array<double>& k,
                     std::size_t q_offset, bool causal) {
        const std::size_t lq = q.shape()[2], lk = k.shape()[2];
        REQUIRE(shape_of(got) == Shape{B, H, lq, lk});
        for (std::size_t b = 0; b < B; ++b)
            for (std::size_t h = 0; h < H; ++h)
                for (std::size_t i = 0; i < lq; ++i)
                    for (std::size_t j = 0; j < lk; ++j) {
                        if (causal && j > q_offset + i) continue;  // masked
                        INFO("b " << b << " head " << h << " query " << i << " key " << j);
                        const double* qp = &q(b, h, i, 0);
                        const double* kp = &k(b, h, j, 0);
                        CHECK(got(b, h, i, j) == Approx(ref(h, qp, kp, long(q_offset + i), long(j))).epsilon(1e-12));
                    }
    };
    SECTION("encoder: bidirectional, keys on both sides at distances j - i") {
        auto [pe, hook] = hooks_for("txl", {}, nn::AttentionSite::EncoderSelf, H, d);
        REQUIRE(hook);
        const TxlRef ref = setup(*hook, 10000.0);
        const Array<double> q = randn<double>({B, H, 5, d}, 24), k = randn<double>({B, H, 5, d}, 25);
        const Array<double> e = txl_logits(*hook, q, k, 0);
        check(e, ref, q, k, 0, false);
        // keys one to the left and one to the right of a query get different positional terms (r_{-1} and
        // r_1 differ in their sin half)
        const Array<double> pb = hook->logit_bias(V(zeros<double>({1, H, 5, d})), 5, 0).value();
        CHECK(std::abs(pb(0, 0, 2, 1) - pb(0, 0, 2, 3)) > 1e-3);
    }
    SECTION("decoder: causal, a full pass and an incremental step; max_time is used") {
        auto [pe, hook] = hooks_for("txl", {{"max_time", "30"}}, nn::AttentionSite::DecoderSelf, H, d);
        const TxlRef ref = setup(*hook, 30.0);
        const Array<double> q = randn<double>({B, H, 6, d}, 26), k = randn<double>({B, H, 6, d}, 27);
        const Array<double> full = txl_logits(*hook, q, k, 0);
        check(full, ref, q, k, 0, true);
        // later keys (masked) get the content term only
        for (std::size_t b = 0; b < B; ++b)
            for (std::size_t h = 0; h < H; ++h) {
                double content = 0;
                for (std::size_t c = 0; c < d; ++c) content += (q(b, h, 1, c) + ref.u(h, c)) * k(b, h, 4, c);
                CHECK(full(b, h, 1, 4) == Approx(content / std::sqrt(double(d))).epsilon(1e-12));
            }
        auto rows = [&](const Array<double>& a, std::size_t from, std::size_t to) {  // a[:, :, from:to, :]
            Array<double> out = uninit<double>({B, H, to - from, d});
            for (std::size_t b = 0; b < B; ++b)
                for (std::size_t h = 0; h < H; ++h)
                    for (std::size_t i = from; i < to; ++i)
                        for (std::size_t c = 0; c < d; ++c) out(b, h, i - from, c) = a(b, h, i, c);
            return out;
        };
        const Array<double> qs = rows(q, 4, 5), ks = rows(k, 0, 5);
        const Array<double> step = txl_logits(*hook, qs, ks, 4);  // query at position 4, keys 0..4 (the cache)
        check(step, ref, qs, ks, 4, true);
        for (std::size_t b = 0; b < B; ++b)
            for (std::size_t h = 0; h < H; ++h)
                for (std::size_t j = 0; j < 5; ++j) CHECK(step(b, h, 0, j) == Approx(full(b, h, 4, j)).epsilon(1e-13));
    }
    SECTION("cross_attention: target queries at q_offset + i, source keys at j, t = j - i") {
        auto [pe, hook] = hooks_for("txl", {{"cross_attention", "true"}}, nn::AttentionSite::Cross, H, d);
        REQUIRE(hook);
        const TxlRef ref = setup(*hook, 10000.0);
        const Array<double> q = randn<double>({B, H, 3, d}, 28), k = randn<double>({B, H, 4, d}, 29);
        check(txl_logits(*hook, q, k, 5), ref, q, k, 5, false);  // every distance negative
        check(txl_logits(*hook, q, k, 1), ref, q, k, 1, false);  // both signs
    }
}

TEST_CASE("plugin/txl/parameters_init_sites_and_errors", "[position][plugin][errors]") {
    auto cfg = tiny_config();  // d_model 8, 2 heads
    cfg.encoder_layers = 2;
    cfg.decoder_layers = 1;
    auto names_of = [&](const Spec& spec) {
        nn::Transformer<double> m(cfg, positions<double>(spec));
        std::vector<std::string> out;
        for (auto& [n, p] : m.named_parameters())
            if (n.find("txl") != std::string::npos) {
                out.push_back(n);
                CHECK(shape_of(p.value()) == (n.find("txl_w_r") != std::string::npos ? Shape{8, 8} : Shape{2, 4}));
            }
        return out;
    };
    CHECK(names_of({{"txl", {}}}) ==
          std::vector<std::string>{"encoder.layers.0.self_attn.txl_u", "encoder.layers.0.self_attn.txl_v",
                                   "encoder.layers.0.self_attn.txl_w_r", "encoder.layers.1.self_attn.txl_u",
                                   "encoder.layers.1.self_attn.txl_v", "encoder.layers.1.self_attn.txl_w_r",
                                   "decoder.layers.0.self_attn.txl_u", "decoder.layers.0.self_attn.txl_v",
                                   "decoder.layers.0.self_attn.txl_w_r"});
    const auto cross = names_of({{"txl", {{"cross_attention", "true"}}}});
    CHECK(cross.size() == 12);
    CHECK(std::count(cross.begin(), cross.end(), "decoder.layers.0.cross_attn.txl_w_r") == 1);
    CHECK_FALSE(hooks_for("txl", {}, nn::AttentionSite::Cross, 2, 4).hook);

    // u, v ~ N(0, 0.02²) as the reference; W_R Xavier-uniform, std 1/sqrt(D)
    auto [pe, hook] = hooks_for("txl", {}, nn::AttentionSite::EncoderSelf, 16, 8);  // D = 128
    for (const char* n : {"txl_u", "txl_v"}) {
        const Array<double>& a = param(*hook, n);
        const double sd = std::sqrt(xt::mean(a * a)());
        CHECK((sd > 0.015 && sd < 0.025));
    }
    const Array<double>& w = param(*hook, "txl_w_r");
    CHECK(std::sqrt(xt::mean(w * w)()) == Approx(1.0 / std::sqrt(128.0)).epsilon(0.05));
    CHECK(xt::amax(xt::abs(w))() <= std::sqrt(6.0 / 256.0));

    Rng rng(1);
    nn::MapOptions o1(std::map<std::string, std::string>{{"max_time", "1"}});
    CHECK_THROWS_WITH(nn::make_position<float>("txl", o1, {8, 2, nn::Side::Encoder, &rng}), Catch::Contains("'max_time'"));
    nn::MapOptions o2;
    CHECK_THROWS_WITH(nn::make_position<float>("txl", o2, {9, 3, nn::Side::Encoder, &rng}),
                      Catch::Contains("d_model = 9 must be even"));
    nn::MapOptions o3(std::map<std::string, std::string>{{"max_tme", "100"}});
    CHECK_THROWS_WITH(nn::make_position<float>("txl", o3, {8, 2, nn::Side::Encoder, &rng}),
                      Catch::Contains("did you mean 'max_time'"));
}

// ---------------------------------------------------------------- incremental decoding
TEST_CASE("incremental/rope", "[incremental][plugin]") {
    incremental_equals_full({{"rope", {}}});
    incremental_equals_full({{"rope", {{"base", "50"}, {"cross_attention", "true"}}}}, nn::NormOrder::Pre);
}
TEST_CASE("incremental/alibi", "[incremental][plugin]") {
    incremental_equals_full({{"alibi", {}}});
    incremental_equals_full({{"alibi", {{"cross_attention", "true"}}}}, nn::NormOrder::Pre);
}
TEST_CASE("incremental/t5", "[incremental][plugin]") {
    incremental_equals_full({{"t5", {}}});
    // 8 buckets, max_distance 12: offsets -4 and -5 fall into log-spaced buckets within 6 steps
    incremental_equals_full({{"t5", {{"num_buckets", "8"}, {"max_distance", "12"}, {"per_layer", "true"}}}},
                            nn::NormOrder::Pre);
    incremental_equals_full({{"rope", {}}, {"t5", {}}});
}
TEST_CASE("incremental/kerple", "[incremental][plugin]") {
    incremental_equals_full({{"kerple", {}}});
    incremental_equals_full({{"kerple", {{"cross_attention", "true"}, {"init", "constant"}}}}, nn::NormOrder::Pre);
}
TEST_CASE("incremental/fire", "[incremental][plugin]") {
    // L = 2.5: steps 3.. are normalised by their own position, so the query position must be right
    incremental_equals_full({{"fire", {{"hidden", "8"}, {"c_init", "0.5"}, {"L_init", "2.5"}}}});
    incremental_equals_full({{"fire", {{"L_init", "1.5"}, {"per_layer", "true"}}}}, nn::NormOrder::Pre);
    incremental_equals_full({{"rope", {}}, {"fire", {{"L_init", "3.5"}}}});
    incremental_equals_full({{"fire", {{"L_init", "2.5"}, {"learn_L", "false"}}}});
}
TEST_CASE("incremental/txl", "[incremental][plugin]") {
    incremental_equals_full({{"txl", {}}});
    incremental_equals_full({{"txl", {{"cross_attention", "true"}, {"max_time", "100"}}}}, nn::NormOrder::Pre);
    incremental_equals_full({{"rope", {}}, {"txl", {}}});
}

// ---------------------------------------------------------------- registry and `relpos list`
TEST_CASE("plugin/registered_and_listed", "[position][plugin]") {
    const std::map<std::string, std::vector<std::string>> keys = {
        {"rope", {"base", "cross_attention", "scaling", "scaling_length"}},
        {"alibi", {"cross_attention", "bidirectional"}},
        {"t5", {"num_buckets", "max_distance", "per_layer"}},
        {"kerple", {"r1_init", "r2_init", "init", "cross_attention"}},
        {"fire", {"hidden", "c_init", "L_init", "per_layer", "learn_L"}},
        {"txl", {"max_time", "cross_attention"}},
    };
    for (auto& [name, want] : keys) {
        INFO(name);
        const nn::PositionEntry* e = nn::position_registry().find(name);
        REQUIRE(e);
        CHECK_FALSE(e->summary.empty());
        std::vector<std::string> got;
        for (auto& d : nn::describe_position_options(name)) got.push_back(d.key);
        CHECK(got == want);
    }
    CHECK(nn::describe_position_options("t5")[0].default_value == "32");
    CHECK(nn::describe_position_options("t5")[1].default_value == "128");
    CHECK(nn::describe_position_options("rope")[0].default_value == "10000");
    // and the CLI prints them
    std::string out;
    FILE* p = popen((std::string(RELPOS_BINARY_DIR) + "/relpos list 2>&1").c_str(), "r");
    REQUIRE(p);
    char buf[4096];
    while (fgets(buf, sizeof buf, p)) out += buf;
    const int st = pclose(p);
    INFO(out);
    REQUIRE((WIFEXITED(st) && WEXITSTATUS(st) == 0));
    for (const char* s : {"num_buckets", "max_distance", "per_layer", "r1_init", "L_init", "max_time"})
        CHECK_THAT(out, Catch::Contains(s));
    for (const auto& name : nn::position_registry().names()) {  // every registered encoding, with its options
        CHECK_THAT(out, Catch::Contains("  " + name + " "));
        for (const auto& d : nn::describe_position_options(name)) CHECK_THAT(out, Catch::Contains(d.key));
    }
}

// The comparison sweeps name every encoding and each of their points builds a model (the options
// are validated there; `relpos run --list` does not build models).
TEST_CASE("plugin/comparison_configs_build", "[plugin][config]") {
    const std::map<std::string, std::size_t> want = {{"configs/position_comparison.yaml", 7},
                                                     {"configs/length_generalization.yaml", 9}};
    for (auto& [path, n] : want) {
        INFO(path);
        const std::string full = std::string(RELPOS_SOURCE_DIR) + "/" + path;
        const ExperimentConfig top = load_config(full);
        std::set<std::string> types;
        std::size_t built = 0;
        for (auto& p : expand_sweep(top, full)) {
            if (p.config.seed != 1) continue;  // the other seeds build the same models
            std::set<std::string> point_types;
            for (auto& s : p.config.model.position) point_types.insert(s.type);
            types.insert(point_types.begin(), point_types.end());
            const auto model = build_model(p.config, 64);
            REQUIRE(model != nullptr);
            CHECK(model->config().src_vocab == 64);
            CHECK(model->enc_pos.size() == p.config.model.position.size());
            // the model holds the parameters its encodings imply, and no others' (a point whose options
            // were dropped on the way would build the wrong model without an error)
            std::set<std::string> kinds;
            for (const auto& [name, v] : model->named_parameters()) {
                if (name.find(".rel_k") != std::string::npos || name.find(".rel_v") != std::string::npos) kinds.insert("shaw");
                if (name.find("relative_attention_bias") != std::string::npos) kinds.insert("t5");
                if (name.find("position.weight") != std::string::npos) kinds.insert("learned");
            }
            std::set<std::string> want_kinds;
            for (const char* t : {"shaw", "t5", "learned"})
                if (point_types.count(t)) want_kinds.insert(t);
            INFO("sweep point " << p.id);
            CHECK(kinds == want_kinds);
            ++built;
        }
        CHECK(built == n);
        for (const char* t : {"none", "sinusoidal", "learned", "shaw", "rope", "alibi", "t5"}) CHECK(types.count(t) == 1);
    }
}

// Every config the repository ships (configs/ and configs/converged/) loads, expands its sweep and
// builds the model of each point: a committed config with a misspelt key, a grid value an encoding
// rejects or a report key naming no row fails here, not hours into a user's campaign. (Data paths are
// not checked: the Brown corpus is installed by `make data`.)
TEST_CASE("configs/every_shipped_config_loads_expands_and_builds", "[config]") {
    namespace fs = std::filesystem;
    std::vector<std::string> paths;
    for (const auto& e : fs::recursive_directory_iterator(std::string(RELPOS_SOURCE_DIR) + "/configs"))
        if (e.is_regular_file() && e.path().extension() == ".yaml") paths.push_back(e.path().string());
    std::sort(paths.begin(), paths.end());
    REQUIRE(paths.size() >= 18);  // 14 in configs/, 4 in configs/converged/
    LoadFlags flags;
    flags.check_paths = false;
    for (const auto& path : paths) {
        INFO(path);
        ExperimentConfig top;
        REQUIRE_NOTHROW(top = load_config(path, {}, flags));
        std::vector<SweepPoint> points;
        REQUIRE_NOTHROW(points = expand_sweep(top, path, {}, flags));
        REQUIRE(!points.empty());
        long first_seed = points.front().config.seed;
        for (const auto& p : points) first_seed = std::min(first_seed, p.config.seed);
        for (const auto& p : points) {
            if (p.config.seed != first_seed) continue;  // the other seeds build the same models
            INFO("sweep point " << p.id);
            std::unique_ptr<nn::Transformer<float>> model;
            CHECK_NOTHROW(model = build_model(p.config, 64));
            CHECK(model != nullptr);
        }
    }
}

// ---------------------------------------------------------------- a plug-in defined only here
namespace {
// "Scaled sinusoidal" positions (Hua et al. 2022): the sinusoids times one learned scalar, added to the
// embeddings (hook 1). Defined and registered by this test alone.
template <class T>
class ToyScaledSinusoidal : public nn::PositionEncoding<T> {
public:
    ToyScaledSinusoidal(nn::Options& o, const nn::PositionContext& c) : d_(c.d_model) {
        Array<T> s = zeros<T>({1});
        s(0) = T(o.get_double("init_scale", 1.0, 0.0, 100.0));
        scale = this->register_parameter("scale", std::move(s));
    }
    Var<T> embed(const Var<T>& x, std::size_t offset) override {
        const std::size_t L = x.dim(1);
        Array<T> pe = uninit<T>({L, d_});  // (L, D)
        for (std::size_t p = 0; p < L; ++p)
            for (std::size_t i = 0; i < d_; ++i) {
                const double angle = double(offset + p) / std::pow(10000.0, double(i - i % 2) / double(d_));
                pe(p, i) = T(i % 2 ? std::cos(angle) : std::sin(angle));
            }
        return x + scale * Var<T>(std::move(pe));
    }
    Var<T> scale;  // (1,)

private:
    std::size_t d_;
};

std::string write_toy_config(const std::string& dir, const std::string& position) {
    const std::string path = dir + "/toy.yaml";
    std::ofstream f(path);
    f << "name: toy_plugin\n"
      << "results_dir: " << dir << "/results\n"
      << "seed: 1\nthreads: 1\n"
      << "data:\n  task: copy\n  valid_split: val\n  test_splits: [test]\n"
      << "  synthetic: {n_symbols: 6, train_size: 120, valid_size: 12, test_size: 12, train_len: [3, 5], "
         "test_len: [6, 7]}\n"
      << "model: {d_model: 8, heads: 2, d_ff: 16, encoder_layers: 1, decoder_layers: 1, dropout: 0.0,\n"
      << "        attention_dropout: 0.0, position: " << position << "}\n"
      << "train: {epochs: 1, batch_tokens: 200, lr: 1.0, warmup: 10}\n"
      << "eval: {beam: 1, splits: [val, test], metrics: [accuracy, loss]}\n";
    return path;
}
}  // namespace

TEST_CASE("plugin/toy_encoding_from_a_test_runs_end_to_end", "[plugin][e2e]") {
    nn::position_registry().add(nn::position_entry<ToyScaledSinusoidal>(
        "toy_scaled_sinusoidal", "sinusoids times a learned scalar (defined in tests/test_position_plugins.cpp)"));
    // Removed again at the end, however the test ends: the generic tests (test_position_generic.cpp) loop over
    // the registry and would check the toy, which has no reference fixture, in a process that ran this test.
    struct Unregister {
        ~Unregister() { nn::position_registry().remove("toy_scaled_sinusoidal"); }
    } unregister;
    const fs::path dir = fs::temp_directory_path() / ("relpos-test-plugin-" + std::to_string(getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    RunOptions ro;
    ro.quiet = true;

    // its options are validated like a built-in's: file, line, column, key, did-you-mean
    const std::string bad = write_toy_config(dir.string(), "{type: toy_scaled_sinusoidal, init_scael: 0.5}");
    try {
        run_experiment(bad, {}, ro);
        FAIL("an unknown option of the toy encoding was accepted");
    } catch (const ConfigError& e) {
        CHECK_THAT(e.what(), Catch::Contains("toy.yaml:") && Catch::Contains("model.position.init_scael") &&
                                 Catch::Contains("did you mean 'init_scale'"));
    }

    const std::string cfg = write_toy_config(dir.string(), "{type: toy_scaled_sinusoidal, init_scale: 0.5}");
    REQUIRE(run_experiment(cfg, {}, ro) == 0);
    const fs::path run = dir / "results" / "toy_plugin" / "runs" / "seed=1";
    REQUIRE(fs::exists(run / "results.json"));
    YAML::Node metrics = YAML::LoadFile((run / "results.json").string())["metrics"];
    REQUIRE(metrics["test.accuracy"]);
    {
        // test.accuracy is the exact-match rate of hyp.test.txt against the task's references
        std::ifstream h(run / "hyp.test.txt");
        std::vector<std::string> hyps;
        for (std::string l; std::getline(h, l);) hyps.push_back(l);
        const Dataset data = load_dataset(load_config(cfg), dir.string());
        const auto& refs = data.splits.at("test").refs;
        REQUIRE(hyps.size() == 12);
        REQUIRE(refs.size() == 12);
        std::size_t exact = 0;
        for (std::size_t i = 0; i < hyps.size(); ++i) exact += hyps[i] == refs[i];
        CHECK(metrics["test.accuracy"].as<double>() == Approx(100.0 * double(exact) / 12.0));
    }
    CHECK(metrics["val.loss"].as<double>() > 0.0);
    // the resolved config names it, and its learned scalar is checkpointed like any parameter
    CHECK(YAML::LoadFile((run / "config.yaml").string())["model"]["position"]["type"].as<std::string>() ==
          "toy_scaled_sinusoidal");
    CHECK(fs::exists(run / "checkpoints" / "last" / "params" / "encoder.position.scale.npy"));
    fs::remove_all(dir);
}

TEST_CASE("registry/a second plug-in of a taken name is refused, for encodings and tasks alike", "[position][tasks]") {
    // nn/registry.hpp: one template for both registries
    nn::PositionRegistry positions;
    positions.add(nn::position_entry<ToyScaledSinusoidal>("toy", "first"));
    CHECK_THROWS_WITH(positions.add(nn::position_entry<ToyScaledSinusoidal>("toy", "second")),
                      Catch::Contains("'toy' is registered already"));
    CHECK(positions.find("toy")->summary == "first");
    positions.replace(nn::position_entry<ToyScaledSinusoidal>("toy", "extended"));  // an explicit extension
    CHECK(positions.find("toy")->summary == "extended");
    CHECK_THROWS_WITH(positions.replace(nn::position_entry<ToyScaledSinusoidal>("other", "x")),
                      Catch::Contains("no plug-in named 'other'"));
    // the built-in registries hold each name once
    for (const auto& names : {nn::position_registry().names(), task_registry().names()}) {
        std::set<std::string> seen(names.begin(), names.end());
        CHECK(seen.size() == names.size());
    }
    CHECK_THROWS(task_registry().add(*task_registry().find("copy")));
}

// ---------------------------------------------------------------- randomized_form: distances
// Ruoss et al.'s released code randomizes its relative encodings' distances: offset t = j - i reads as the
// batch's drawn distance d_|t| (sorted, distinct, in [1, N)), mirrored on the left. Its reference for noisy ALiBi:
// right keys -m d_t, left keys -m (d_|t| - 0.5).
TEST_CASE("plugin/randomized_distances/alibi_bias_reads_one_distance_per_offset", "[position][plugin][randomized]") {
    const double m0 = 1. / 16, m1 = 1. / 256;
    auto [pe, hook] = hooks_for("alibi", {{"randomized", "64"}, {"randomized_form", "distances"}},
                                nn::AttentionSite::EncoderSelf, 2, 4);
    REQUIRE(pe->randomized_distances());
    const std::vector<std::size_t> d = {3, 7, 20};  // the offsets 1, 2, 3
    pe->set_position_map(nn::PositionMap{nullptr, std::make_shared<const std::vector<std::size_t>>(d)});
    const Array<double> b = bias_of(*hook, 2, 4, 4, 0);
    for (std::size_t i = 0; i < 4; ++i)
        for (std::size_t j = 0; j < 4; ++j) {
            const long t = long(j) - long(i);
            const double dist = t == 0 ? 0.0 : double(d[std::size_t(std::labs(t)) - 1]);
            const double want = t < 0 ? -(dist - 0.5) : -dist;
            INFO("query " << i << " key " << j);
            CHECK(b(0, i, j) == Approx(m0 * want));
            CHECK(b(1, i, j) == Approx(m1 * want));
        }
    // the same offset, the same bias, wherever the query is (a Toeplitz pattern, unlike drawn positions)
    CHECK(b(0, 0, 1) == b(0, 2, 3));
}

TEST_CASE("plugin/randomized_distances/txl_term_is_the_sinusoids_of_the_drawn_distances", "[position][plugin][randomized]") {
    const std::size_t B = 2, H = 2, d = 4, D = H * d, L = 4;
    auto [pe, hook] = hooks_for("txl", {{"randomized", "64"}, {"randomized_form", "distances"}},
                                nn::AttentionSite::EncoderSelf, H, d);
    param(*hook, "txl_u") = randn<double>({H, d}, 31, 0.7);
    param(*hook, "txl_v") = randn<double>({H, d}, 32, 0.7);
    param(*hook, "txl_w_r") = randn<double>({D, D}, 33, 1.0 / std::sqrt(double(D)));
    const TxlRef ref{param(*hook, "txl_u"), param(*hook, "txl_v"), param(*hook, "txl_w_r"), 10000.0};
    const std::vector<std::size_t> dist = {5, 9, 40};
    pe->set_position_map(nn::PositionMap{nullptr, std::make_shared<const std::vector<std::size_t>>(dist)});
    const Array<double> q = randn<double>({B, H, L, d}, 34), k = randn<double>({B, H, L, d}, 35);
    const Array<double> e = txl_logits(*hook, q, k, 0);
    for (std::size_t b = 0; b < B; ++b)
        for (std::size_t h = 0; h < H; ++h)
            for (std::size_t i = 0; i < L; ++i)
                for (std::size_t j = 0; j < L; ++j) {
                    const long t = long(j) - long(i);
                    const long dt = t == 0 ? 0 : (t > 0 ? 1 : -1) * long(dist[std::size_t(std::labs(t)) - 1]);
                    INFO("b " << b << " head " << h << " query " << i << " key " << j);
                    CHECK(e(b, h, i, j) == Approx(ref(h, &q(b, h, i, 0), &k(b, h, j, 0), 0, dt)).epsilon(1e-12));
                }
    // the fused core can take it: the term stays a per-offset table
    RelativeLogits<double> rl;
    CHECK(hook->relative_logits(V(zeros<double>({1, H, L, d})), L, 0, rl));
}

TEST_CASE("plugin/randomized_distances/option_errors_and_the_model_draw", "[position][plugin][randomized][errors]") {
    Rng rng(3);
    auto make = [&](const std::string& type, std::map<std::string, std::string> opts) {
        nn::MapOptions o(std::move(opts), "model.position");
        return nn::make_position<double>(type, o, nn::PositionContext{8, 2, nn::Side::Encoder, &rng});
    };
    CHECK_THROWS_WITH(make("alibi", {{"randomized_form", "distances"}}),
                      Catch::Contains("randomized_form") && Catch::Contains("randomized: N"));
    CHECK_THROWS_WITH(make("rope", {{"randomized", "64"}, {"randomized_form", "distances"}}),
                      Catch::Contains("randomized_form") && Catch::Contains("alibi and txl"));
    CHECK_THROWS_WITH(make("alibi", {{"randomized", "64"}, {"randomized_form", "offsets"}}),
                      Catch::Contains("randomized_form") && Catch::Contains("distances"));
    CHECK_FALSE(make("alibi", {{"randomized", "64"}})->randomized_distances());
    // a training pass draws L - 1 sorted distinct distances of [1, N) and leaves the positions alone
    auto cfg = tiny_config(7);
    cfg.family = nn::Family::EncoderOnly;
    cfg.dims.dropout = cfg.dims.attention_dropout = 0.0;
    auto pes = positions<double>({{"alibi", {{"randomized", "12"}, {"randomized_form", "distances"}}}});
    nn::Transformer<double> model(cfg, pes);
    const std::vector<std::int32_t> ids = {2, 3, 4, 5, 6, 2, 3, 4, 5, 6, 2};  // 11 tokens: 10 distances of the 11 in [1, 12)
    NoGradGuard ng;
    for (int pass = 0; pass < 5; ++pass) {
        model.forward_bidirectional(ids, 1, ids.size());
        const nn::PositionMap& m = model.enc_pos[0]->position_map();
        REQUIRE(m.identity());
        REQUIRE(m.distances);
        const std::vector<std::size_t>& got = *m.distances;
        REQUIRE(got.size() == ids.size() - 1);
        for (std::size_t x = 0; x < got.size(); ++x) {
            CHECK(got[x] >= 1);
            CHECK(got[x] < 12);
            if (x) CHECK(got[x] > got[x - 1]);
        }
    }
}
