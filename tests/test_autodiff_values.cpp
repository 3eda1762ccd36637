// Forward values against hand-computed cases, engine behaviour (accumulation, zero_grad, no-grad
// mode) and shape errors that name the op and both shapes.
#include <cmath>
#include <cstring>
#include <limits>

#include "autodiff/expf_libm.hpp"
#include "tests/helpers.hpp"

using namespace relpos;
using namespace relpos::test;
using V = Var<double>;

namespace {
Array<double> arr(const Shape& s, std::vector<double> v) {
    Array<double> a = uninit<double>(s);
    REQUIRE(v.size() == a.size());
    std::copy(v.begin(), v.end(), a.begin());
    return a;
}
}  // namespace

TEST_CASE("values/broadcast_arithmetic", "[values]") {
    V a(arr({2, 2}, {1, 2, 3, 4})), b(arr({2}, {10, 20}));
    require_close((a + b).value(), arr({2, 2}, {11, 22, 13, 24}), 0);
    require_close((a - b).value(), arr({2, 2}, {-9, -18, -7, -16}), 0);
    require_close((a * b).value(), arr({2, 2}, {10, 40, 30, 80}), 0);
    require_close((b / a).value(), arr({2, 2}, {10, 10, 10.0 / 3, 5}), 1e-15);
    require_close((2.0 - a).value(), arr({2, 2}, {1, 0, -1, -2}), 0);
}

TEST_CASE("values/matmul", "[values]") {
    V a(arr({2, 3}, {1, 2, 3, 4, 5, 6})), b(arr({3, 2}, {7, 8, 9, 10, 11, 12}));
    require_close(matmul(a, b).value(), arr({2, 2}, {58, 64, 139, 154}), 0);
    require_close(matmul(b, a, true, true).value(), arr({2, 2}, {58, 139, 64, 154}), 0);
    // batched: two copies of a against one shared b
    V ab(arr({2, 2, 3}, {1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 5, 6}));
    require_close(matmul(ab, b).value(), arr({2, 2, 2}, {58, 64, 139, 154, 58, 64, 139, 154}), 0);
}

TEST_CASE("values/softmax_and_masks", "[values]") {
    V x(arr({1, 3}, {1, 2, 3}));
    const double z = std::exp(1) + std::exp(2) + std::exp(3);
    require_close(softmax(x).value(), arr({1, 3}, {std::exp(1) / z, std::exp(2) / z, std::exp(3) / z}), 1e-14);
    require_close(log_softmax(x).value(), arr({1, 3}, {1 - std::log(z), 2 - std::log(z), 3 - std::log(z)}), 1e-14);
    xt::xarray<bool> blocked = {{false, true, false}};
    Array<double> m = mask_from_bool<double>(blocked);
    const double z2 = std::exp(1) + std::exp(3);
    auto y = softmax(x, -1, &m).value();
    REQUIRE(y(0, 1) == 0.0);  // exactly zero weight on a blocked entry
    require_close(y, arr({1, 3}, {std::exp(1) / z2, 0, std::exp(3) / z2}), 1e-14);
    xt::xarray<bool> all = {{true, true, true}};
    Array<double> ma = mask_from_bool<double>(all);
    auto y0 = softmax(x, -1, &ma).value();
    for (auto v : y0) REQUIRE(v == 0.0);  // fully blocked row: zeros, not NaN
}

TEST_CASE("values/cross_entropy", "[values]") {
    V logits(arr({2, 3}, {1, 2, 3, 1, 1, 1}));
    const double lse0 = std::log(std::exp(1) + std::exp(2) + std::exp(3));
    const double lse1 = 1 + std::log(3.0);
    // plain: mean of -log p(target)
    REQUIRE(cross_entropy(logits, {2, 0}).item() == Approx(((lse0 - 3) + (lse1 - 1)) / 2).epsilon(1e-14));
    // ignore index drops the row from the mean
    CrossEntropyOptions o;
    o.ignore_index = 0;
    REQUIRE(cross_entropy(logits, {2, 0}, o).item() == Approx(lse0 - 3).epsilon(1e-14));
    // label smoothing 0.3 over V = 3: q = 0.7 onehot + 0.1
    o.ignore_index = -1;
    o.label_smoothing = 0.3;
    o.mean = false;
    const double row0 = 0.7 * (lse0 - 3) + 0.1 * ((lse0 - 1) + (lse0 - 2) + (lse0 - 3));
    REQUIRE(cross_entropy(logits, {2, 1}, o).item() == Approx(row0 + (lse1 - 1)).epsilon(1e-14));
    // without a recorded gradient (validation) the same number, bit for bit, from the path that keeps
    // no probabilities; a leaf that requires grad takes the other path
    V leaf_logits(arr({2, 3}, {1, 2, 3, 1, 1, 1}), true);
    const double with_grad = cross_entropy(leaf_logits, {2, 1}, o).item();
    double no_grad;
    {
        NoGradGuard ng;
        no_grad = cross_entropy(leaf_logits, {2, 1}, o).item();
    }
    REQUIRE(no_grad == with_grad);
    REQUIRE(cross_entropy(logits, {2, 1}, o).item() == with_grad);
}

TEST_CASE("values/layer_norm", "[values]") {
    V x(arr({1, 4}, {1, 2, 3, 4})), g(arr({4}, {1, 1, 2, 2})), b(arr({4}, {0, 0, 0, 1}));
    // mean 2.5, var 1.25
    const double rs = 1 / std::sqrt(1.25 + 1e-5);
    require_close(layer_norm(x, g, b).value(), arr({1, 4}, {-1.5 * rs, -0.5 * rs, 2 * 0.5 * rs, 2 * 1.5 * rs + 1}), 1e-14);
}

TEST_CASE("values/embedding_and_slice_concat", "[values]") {
    V w(arr({3, 2}, {0, 1, 10, 11, 20, 21}));
    require_close(embedding(w, {2, 0}, {2}).value(), arr({2, 2}, {20, 21, 0, 1}), 0);
    V a(arr({2, 3}, {1, 2, 3, 4, 5, 6}));
    require_close(slice(a, 1, 1, 3).value(), arr({2, 2}, {2, 3, 5, 6}), 0);
    require_close(concat<double>({a, slice(a, 1, 0, 1)}, 1).value(), arr({2, 4}, {1, 2, 3, 1, 4, 5, 6, 4}), 0);
    require_close(transpose(a).value(), arr({3, 2}, {1, 4, 2, 5, 3, 6}), 0);
    require_close(sum(a, {0}).value(), arr({3}, {5, 7, 9}), 0);
    require_close(mean(a, {1}, true).value(), arr({2, 1}, {2, 5}), 0);
    require_close(max(a, 0).value(), arr({3}, {4, 5, 6}), 0);
}

TEST_CASE("values/gelu_relu", "[values]") {
    V x(arr({3}, {-1, 0, 2}));
    require_close(relu(x).value(), arr({3}, {0, 0, 2}), 0);
    require_close(gelu(x).value(), arr({3}, {-0.15865525393145707, 0, 1.9544997361036416}), 1e-12);
}

TEST_CASE("values/linear_epilogues_equal_the_separate_ops_bit_for_bit", "[values]") {
    // linear_relu_dropout replaces dropout(relu(linear)) in the FFN and linear_scaled linear * scale in
    // attention's query projection: values, every gradient and the dropout stream's state afterwards
    // must be the same, bit for bit, not merely close.
    using F = Var<float>;
    enum Kind { Relu, ReluDropout, Scale };
    auto run = [](bool fused, Kind kind) {
        F x = leaf<float>({3, 7, 16}, 11), w = leaf<float>({16, 24}, 12, 0.3), b = leaf<float>({24}, 13, 0.5);
        Rng rng(21);
        F y;
        if (kind == Relu) y = fused ? linear_relu(x, w, b) : relu(linear(x, w, b));
        if (kind == ReluDropout)
            y = fused ? linear_relu_dropout(x, w, b, 0.3, rng, true) : dropout(relu(linear(x, w, b)), 0.3, rng, true);
        if (kind == Scale) y = fused ? linear_scaled(x, w, b, 0.17677669f) : linear(x, w, b) * 0.17677669f;
        // a non-uniform upstream gradient (some negative: the masks must act on it unchanged)
        sum(y * F(randn<float>({3, 7, 24}, 14), false)).backward();
        Array<float> next = uninit<float>({1});
        next(0) = float(rng.next_u64() % 1000);
        return std::vector<Array<float>>{y.value(), x.grad(), w.grad(), b.grad(), next};
    };
    for (Kind kind : {Relu, ReluDropout, Scale}) {
        INFO("epilogue " << int(kind));
        const auto a = run(true, kind), c = run(false, kind);
        std::size_t zeros = 0;
        for (float v : a[0]) zeros += v == 0.0f;
        if (kind == Relu) REQUIRE(zeros > 150);         // relu's mask is exercised (about half of 504)
        if (kind == ReluDropout) REQUIRE(zeros > 300);  // and dropout's on top of it (about 65%)
        for (std::size_t i = 0; i < a.size(); ++i) {
            REQUIRE(shape_of(a[i]) == shape_of(c[i]));
            REQUIRE(std::memcmp(a[i].data(), c[i].data(), a[i].size() * sizeof(float)) == 0);
        }
    }
    // not in training (or p = 0): plain linear_relu, no draw
    F x = leaf<float>({2, 16}, 11), w = leaf<float>({16, 8}, 12), b = leaf<float>({8}, 13);
    Rng r1(5), r2(5);
    const Array<float> e = linear_relu_dropout(x, w, b, 0.3, r1, false).value();
    REQUIRE(std::memcmp(e.data(), linear_relu(x, w, b).value().data(), e.size() * sizeof(float)) == 0);
    REQUIRE(r1.next_u64() == r2.next_u64());
}

TEST_CASE("values/rotate_pairs_equals_the_composed_rotation_bit_for_bit", "[values]") {
    // rotate_pairs replaced x ⊙ C + (x · R) ⊙ S (R the signed pair swap, a (d, d) gemm) in the rotary
    // encodings: its values and gradient must be those of the composed form bit for bit, so that runs
    // trained before and after it are one computation.
    using F = Var<float>;
    const std::size_t L = 7, d = 8;
    Array<float> c = uninit<float>({L, d}), s = uninit<float>({L, d}), r = zeros<float>({d, d});
    for (std::size_t p = 0; p < L; ++p)
        for (std::size_t i = 0; i < d; i += 2) {
            const double a = double(p) * std::pow(10000.0, -double(i) / double(d));
            c(p, i) = c(p, i + 1) = float(std::cos(a) * (1.0 + 0.01 * double(i)));
            s(p, i) = s(p, i + 1) = float(std::sin(a) * (1.0 + 0.01 * double(i)));
            r(i + 1, i) = -1.f;
            r(i, i + 1) = 1.f;
        }
    auto run = [&](bool fused) {
        F x = leaf<float>({3, 2, L, d}, 31);
        F y = fused ? rotate_pairs(x, F(c), F(s)) : x * F(c) + matmul(x, F(r)) * F(s);
        sum(y * F(randn<float>({3, 2, L, d}, 32), false)).backward();
        return std::vector<Array<float>>{y.value(), x.grad()};
    };
    const auto a = run(true), b = run(false);
    for (std::size_t i = 0; i < a.size(); ++i) {
        REQUIRE(shape_of(a[i]) == shape_of(b[i]));
        REQUIRE(std::memcmp(a[i].data(), b[i].data(), a[i].size() * sizeof(float)) == 0);
    }
}

TEST_CASE("values/dropout", "[values]") {
    Array<float> ones = full<float>({100000}, 1.f);
    Var<float> a(ones, true);
    Rng rng(3);
    auto y = dropout(a, 0.25, rng, true);
    std::size_t zeros_n = 0;
    double s = 0;
    for (float v : y.value()) {
        zeros_n += v == 0.f;
        REQUIRE((v == 0.f || std::abs(v - 1.f / 0.75f) < 1e-6));
        s += v;
    }
    REQUIRE(zeros_n > 24000);
    REQUIRE(zeros_n < 26000);
    REQUIRE(s / 100000 == Approx(1.0).epsilon(0.02));  // inverted: expectation preserved
    // eval mode: identity (the very same node)
    auto e = dropout(a, 0.25, rng, false);
    REQUIRE(e.node() == a.node());
    // same seed -> same mask
    Rng r1(9), r2(9);
    auto y1 = dropout(a, 0.5, r1, true), y2 = dropout(a, 0.5, r2, true);
    const bool same_mask = y1.value() == y2.value();
    REQUIRE(same_mask);
}

TEST_CASE("values/dropout_mask_is_four_16_bit_slices_per_draw", "[values]") {
    // The documented mask: draw k's 16-bit slices j = 0..3 (low first) decide elements 4k + j, kept when
    // the slice is >= round(p * 65536); a tail shorter than 4 uses the low slices of one more draw.
    // Lengths across the kernel's 4,096-decision buffers, and tails of 1-3.
    for (std::size_t n : {1, 4, 7, 10, 4095, 4096, 4097, 4099, 8193, 12290}) {
        const double p = 0.3;
        Var<float> a(full<float>({n}, 1.f), true);
        Rng rng(17), ref(17);
        auto y = dropout(a, p, rng, true);
        const std::uint32_t thresh = static_cast<std::uint32_t>(p * 65536.0 + 0.5);
        std::uint64_t r = 0;
        for (std::size_t i = 0; i < n; ++i, r >>= 16) {
            if (i % 4 == 0) r = ref.next_u64();
            const bool keep = (r & 0xffff) >= thresh;
            REQUIRE(y.value()[i] == (keep ? 1.f / 0.7f : 0.f));
        }
        REQUIRE(rng.next_u64() == ref.next_u64());  // the same number of draws
        // the backward pass uses the same mask
        sum(y * y).backward();
        for (std::size_t i = 0; i < n; ++i) REQUIRE(a.grad()[i] == 2.f * y.value()[i] * (1.f / 0.7f));
    }
}

TEST_CASE("values/permute_view_is_one_copy_of_reshape_then_permute", "[values]") {
    Array<double> x = uninit<double>({2, 3, 4});
    for (std::size_t i = 0; i < x.size(); ++i) x.data()[i] = double(i) * 0.5 - 3;
    V a(x);
    // split heads: (B, L, H*d) viewed as (B, L, H, d), heads first
    require_close(permute_view(a, {2, 3, 2, 2}, {0, 2, 1, 3}).value(),
                  permute(reshape(a, {2, 3, 2, 2}), {0, 2, 1, 3}).value(), 0);
    // merge heads: (B, H, L, d) -> (B, L, H, d) -> (B, L, H*d)
    V h = permute(reshape(a, {2, 3, 2, 2}), {0, 2, 1, 3});
    require_close(permute_view(h, h.shape(), {0, 2, 1, 3}, {2, 3, 4}).value(), x, 0);
    REQUIRE(permute_view(h, h.shape(), {0, 2, 1, 3}, {2, 3, 4}).shape() == Shape{2, 3, 4});
}

TEST_CASE("engine/gradients_accumulate_and_zero_grad", "[engine]") {
    V a(arr({2}, {1, 2}), true);
    sum(a * a).backward();
    require_close(a.grad(), arr({2}, {2, 4}), 0);
    sum(a * 3.0).backward();  // accumulates
    require_close(a.grad(), arr({2}, {5, 7}), 0);
    a.zero_grad();
    require_close(a.grad(), arr({2}, {0, 0}), 0);
}

TEST_CASE("engine/no_grad_records_nothing", "[engine]") {
    V a(arr({2}, {1, 2}), true);
    {
        NoGradGuard g;
        V y = a * a;
        REQUIRE_FALSE(y.requires_grad());
        REQUIRE(y.node()->parents.empty());
    }
    V y = a * a;
    REQUIRE(y.requires_grad());
}

TEST_CASE("engine/backward_releases_graph", "[engine]") {
    V a(arr({2}, {1, 2}), true);
    V h = exp(a);
    V y = sum(h * h);
    y.backward();
    REQUIRE(h.node()->parents.empty());  // intermediate closures and edges are freed
    REQUIRE_FALSE(static_cast<bool>(h.node()->backward_fn));
    REQUIRE(a.has_grad());  // leaves keep their gradients
}

TEST_CASE("errors/shape_mismatch_names_op_and_shapes", "[errors]") {
    V a(zeros<double>({2, 3})), b(zeros<double>({4, 5})), c(zeros<double>({2, 4}));
    auto msg = [](auto&& f) {
        try {
            f();
        } catch (const ShapeError& e) {
            return std::string(e.what());
        }
        return std::string("no exception");
    };
    std::string m = msg([&] { add(a, c); });
    CHECK_THAT(m, Catch::Contains("add") && Catch::Contains("(2, 3)") && Catch::Contains("(2, 4)"));
    m = msg([&] { matmul(a, b); });
    CHECK_THAT(m, Catch::Contains("matmul") && Catch::Contains("(2, 3)") && Catch::Contains("(4, 5)"));
    m = msg([&] { mul(a, b); });
    CHECK_THAT(m, Catch::Contains("mul") && Catch::Contains("(2, 3)") && Catch::Contains("(4, 5)"));
    m = msg([&] { reshape(a, {5}); });
    CHECK_THAT(m, Catch::Contains("reshape") && Catch::Contains("(2, 3)") && Catch::Contains("(5,)"));
    m = msg([&] { permute_view(a, {5}, {0}); });
    CHECK_THAT(m, Catch::Contains("permute") && Catch::Contains("(2, 3)") && Catch::Contains("(5,)"));
    m = msg([&] { permute_view(a, {3, 2}, {1, 0}, {7}); });
    CHECK_THAT(m, Catch::Contains("permute") && Catch::Contains("(2, 3)") && Catch::Contains("(7,)"));
    m = msg([&] { concat<double>({a, b}, 0); });
    CHECK_THAT(m, Catch::Contains("concat") && Catch::Contains("(2, 3)") && Catch::Contains("(4, 5)"));
    V g(zeros<double>({4})), be(zeros<double>({4}));
    m = msg([&] { layer_norm(a, g, be); });
    CHECK_THAT(m, Catch::Contains("layer_norm") && Catch::Contains("(2, 3)") && Catch::Contains("(4,)"));
    V q(zeros<double>({1, 2, 3, 4})), t(zeros<double>({5, 3}));
    m = msg([&] { rel_logits(q, t, 2, 3); });
    CHECK_THAT(m, Catch::Contains("rel_logits") && Catch::Contains("(1, 2, 3, 4)") && Catch::Contains("(5, 3)"));
}

namespace {
// The attention softmax as it was first written: one row at a time, libm's expf, sums in order.
std::pair<std::vector<float>, std::vector<float>> softmax_rows_reference(const std::vector<float>& x,
                                                                         const std::vector<float>& g,
                                                                         std::size_t rows, std::size_t Lq,
                                                                         std::size_t Lk, bool causal,
                                                                         const std::vector<float>* kp) {
    std::vector<float> y(x.size()), d(x.size());
    for (std::size_t row = 0; row < rows; ++row) {
        const std::size_t i = row % Lq, b = row / (rows / (kp ? kp->size() / Lk : 1));
        const std::size_t n = causal ? std::min(Lk, i + 1) : Lk;
        float* yr = y.data() + row * Lk;
        for (std::size_t j = 0; j < n; ++j) yr[j] = x[row * Lk + j] + (kp ? (*kp)[b * Lk + j] : 0.f);
        float mx = -std::numeric_limits<float>::infinity();
        for (std::size_t j = 0; j < n; ++j) mx = std::max(mx, yr[j]);
        if (mx == -std::numeric_limits<float>::infinity()) {
            std::fill(yr, yr + Lk, 0.f);
        } else {
            float sum = 0;
            for (std::size_t j = 0; j < n; ++j) {
                yr[j] = std::exp(yr[j] - mx);
                sum += yr[j];
            }
            const float inv = 1.f / sum;
            for (std::size_t j = 0; j < n; ++j) yr[j] *= inv;
            std::fill(yr + n, yr + Lk, 0.f);
        }
        float dot = 0;
        for (std::size_t j = 0; j < Lk; ++j) dot += g[row * Lk + j] * yr[j];
        for (std::size_t j = 0; j < Lk; ++j) d[row * Lk + j] = yr[j] * (g[row * Lk + j] - dot);
    }
    return {y, d};
}
}  // namespace

// The softmax of attention computes its exps vectorised and its rows' sums side by side: its values must
// stay those of the one-row-at-a-time scalar loop with libm's expf, bit for bit (the campaign's runs span
// binaries before and after).
TEST_CASE("values/attention_softmax_bit_identical_to_the_scalar_row_loop", "[values]") {
    Rng rng(5);
    for (const std::size_t Lk : {1, 5, 16, 31, 32, 33, 100}) {
        for (const bool causal : {false, true}) {
            for (const bool padded : {false, true}) {
                const std::size_t B = 3, H = 2, Lq = causal ? Lk : 7, rows = B * H * Lq;
                std::vector<float> x(rows * Lk), g(rows * Lk), kp(B * Lk, 0.f);
                for (auto& v : x) v = float(rng.normal() * 6);
                for (auto& v : g) v = float(rng.normal());
                for (std::size_t b = 0; b < B; ++b)  // batch entry b has its last b keys padded
                    for (std::size_t j = Lk - std::min(Lk, b); j < Lk; ++j) kp[b * Lk + j] = -INFINITY;
                Array<float> xa = uninit<float>({B, H, Lq, Lk}), kpa = uninit<float>({B, Lk});
                std::copy(x.begin(), x.end(), xa.data());
                std::copy(kp.begin(), kp.end(), kpa.data());
                Var<float> xv(xa, true);
                const Array<float>* no_mask = nullptr;
                Var<float> y = attention_softmax<float>(xv, padded ? &kpa : nullptr, no_mask, causal, 0);
                Array<float> ga = uninit<float>(y.shape());
                std::copy(g.begin(), g.end(), ga.data());
                y.backward(ga);
                const auto [yr, dr] = softmax_rows_reference(x, g, rows, Lq, Lk, causal, padded ? &kp : nullptr);
                INFO("Lk " << Lk << " causal " << causal << " padded " << padded);
                REQUIRE(std::memcmp(y.value().data(), yr.data(), yr.size() * sizeof(float)) == 0);
                // the backward pass is the one-row loop itself; its dot product's roundings depend on how
                // the compiler vectorises it in each translation unit, so here only close
                for (std::size_t i = 0; i < dr.size(); ++i)
                    REQUIRE(std::abs(xv.grad().data()[i] - dr[i]) <= 1e-6f * (1.f + std::abs(dr[i])));
            }
        }
    }
}

// The vector exp of the attention softmax against libm's expf: on 2^21 floats spread over the whole bit
// space and the softmax's range [-110, 0] (the whole 2^32 were checked once by hand: docs/performance.md).
TEST_CASE("values/expf_libm_reproduces_expf", "[values]") {
#if defined(__GLIBC__) && defined(__x86_64__)
    CHECK(vec::use_vector_expf());  // the supported platform: the fast path must be on
#endif
    const vec::ExpfMismatch m = vec::expf_libm_check(1 << 20);
    INFO("x " << m.x << ": vector " << m.vector << ", expf " << m.scalar);
    if (vec::use_vector_expf()) REQUIRE_FALSE(m.found);
    // and where it differs, the softmax does not use it
    if (m.found) CHECK_FALSE(vec::use_vector_expf());
}

// sum_to (the reduction of a broadcast operand's gradient) against an element-by-element walk of g in order:
// each target entry must get its terms in the same order, bit for bit, whatever blocks the walk takes.
TEST_CASE("values/sum_to_adds_each_entry_in_the_gradients_order_bit_for_bit", "[values]") {
    const std::vector<std::pair<Shape, Shape>> cases = {
        {{3, 4, 5, 8}, {1, 4, 1, 8}},  // Transformer-XL's u and v: over batch and length
        {{3, 4, 5, 8}, {4, 1, 1}},     // a per-head scalar
        {{3, 4, 5, 8}, {3, 1, 5, 1}},  // the last axis reduced
        {{3, 4, 5, 8}, {5, 8}},        // a suffix
        {{3, 4, 5, 8}, {1, 1, 1, 1}},  // everything
        {{6, 1, 7}, {1, 1, 7}},
        {{2, 3, 4, 5, 6}, {2, 1, 4, 1, 6}},
    };
    for (const auto& [gs, ts] : cases) {
        const Array<float> g = randn<float>(gs, 71);
        const Array<float> r = sum_to(g, ts);
        // the reference: every element of g added to its target entry, in g's order
        const std::size_t nd = gs.size();
        Shape t(nd, 1);
        for (std::size_t i = 0; i < ts.size(); ++i) t[nd - ts.size() + i] = ts[i];
        Array<float> want = zeros<float>(ts);
        std::vector<std::size_t> idx(nd, 0);
        for (std::size_t e = 0; e < g.size(); ++e) {
            std::size_t off = 0;
            for (std::size_t i = 0; i < nd; ++i) off = off * t[i] + (t[i] == 1 ? 0 : idx[i]);
            want.data()[off] += g.data()[e];
            for (std::size_t i = nd; i-- > 0;) {
                if (++idx[i] < gs[i]) break;
                idx[i] = 0;
            }
        }
        INFO(shape_str(gs) << " -> " << shape_str(ts));
        REQUIRE(shape_of(r) == ts);
        REQUIRE(std::memcmp(r.data(), want.data(), want.size() * sizeof(float)) == 0);
    }
}
