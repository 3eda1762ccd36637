// The efficient relative attention (bucketed gemm + gather / scatter-add + gemm) against a
// brute-force implementation of the paper's equations (3) and (4) that builds the (Lq, Lk, d)
// tensors of a^K_ij and a^V_ij explicitly, in value and gradient.
#include <cmath>
#include <limits>

#include "tests/helpers.hpp"

using namespace relpos;
using namespace relpos::test;
using V = Var<double>;

namespace {

struct Variant {
    bool keys, values, tie, per_head;
    enum Mask { None, Padding, Causal } mask;
};

// a^X_ij = table[clip(j - i, k)] as an explicit tensor: (Lq, Lk, d) shared or (H, Lq, Lk, d) per head.
V gather_rel(const V& table, std::size_t k, std::size_t Lq, std::size_t Lk, std::size_t H, bool per_head) {
    const long K = static_cast<long>(k);
    const std::size_t R = 2 * k + 1;
    std::vector<std::int32_t> ids;
    for (std::size_t h = 0; h < (per_head ? H : 1); ++h)
        for (std::size_t i = 0; i < Lq; ++i)
            for (std::size_t j = 0; j < Lk; ++j) {
                const long rel = std::clamp(static_cast<long>(j) - static_cast<long>(i), -K, K) + K;
                ids.push_back(static_cast<std::int32_t>((per_head ? h * R : 0) + rel));
            }
    const std::size_t d = table.shape().back();
    V flat = per_head ? reshape(table, {H * R, d}) : table;
    return per_head ? embedding(flat, ids, {H, Lq, Lk}) : embedding(flat, ids, {Lq, Lk});
}

Array<double> make_mask(Variant::Mask kind, std::size_t B, std::size_t H, std::size_t L) {
    const double ninf = -std::numeric_limits<double>::infinity();
    Array<double> m = zeros<double>({B, H, L, L});
    for (std::size_t b = 0; b < B; ++b)
        for (std::size_t h = 0; h < H; ++h)
            for (std::size_t i = 0; i < L; ++i)
                for (std::size_t j = 0; j < L; ++j) {
                    if (kind == Variant::Padding && b == 1 && j + 2 > L && j > 0) m(b, h, i, j) = ninf;  // pad last key(s)
                    if (kind == Variant::Causal && j > i) m(b, h, i, j) = ninf;
                }
    return m;
}

// Equations (3) and (4), brute force: e_ij = q_i (k_j + a^K_ij)ᵀ / sqrt(d); z_i = sum_j a_ij (v_j + a^V_ij).
V reference(const V& q, const V& kk, const V& v, const V& tk, const V& tv, std::size_t k, const Variant& var,
            const Array<double>& mask) {
    const std::size_t B = q.dim(0), H = q.dim(1), L = q.dim(2), d = q.dim(3);
    const double scale = 1.0 / std::sqrt(double(d));
    V e = matmul(q, kk, false, true);  // (B, H, L, L)
    if (var.keys) {
        V aK = gather_rel(tk, k, L, L, H, var.per_head);         // (..., L, L, d)
        V qe = reshape(q, {B, H, L, 1, d});                       // broadcast over j
        e = e + sum(qe * aK, {-1});                               // q_i · a^K_ij
    }
    V a = softmax(e * scale, -1, &mask);
    V z = matmul(a, v);
    if (var.values) {
        V aV = gather_rel(var.tie ? tk : tv, k, L, L, H, var.per_head);
        z = z + sum(reshape(a, {B, H, L, L, 1}) * aV, {3});      // sum_j a_ij a^V_ij
    }
    return z;
}

// The fast path, as MultiHeadAttention composes it: q pre-scaled, bucketed kernels for both terms.
// `fused` uses add_rel_logits (what MultiHeadAttention calls), otherwise logits + rel_logits.
V fast(const V& q, const V& kk, const V& v, const V& tk, const V& tv, std::size_t k, const Variant& var,
       const Array<double>& mask, bool fused) {
    const std::size_t L = q.dim(2), d = q.dim(3);
    V qs = q * (1.0 / std::sqrt(double(d)));
    V e = matmul(qs, kk, false, true);
    if (var.keys) e = fused ? add_rel_logits(e, qs, tk, k, 0) : e + rel_logits(qs, tk, k, L, 0);
    V a = softmax(e, -1, &mask);
    V z = matmul(a, v);
    if (var.values) z = z + rel_values(a, var.tie ? tk : tv, k, 0);
    return z;
}

void compare(const Variant& var) {
    const std::size_t B = 2, H = 2, d = 3;
    for (std::size_t L : {1, 5, 33})
        for (std::size_t k : {0, 1, 4, 40})
        for (bool fused : {false, true}) {
            INFO("L=" << L << " k=" << k << " fused=" << fused << " keys=" << var.keys << " values=" << var.values << " tie=" << var.tie
                      << " per_head=" << var.per_head << " mask=" << int(var.mask));
            const std::size_t R = 2 * k + 1;
            const Shape ts = var.per_head ? Shape{H, R, d} : Shape{R, d};
            const std::uint64_t s = L * 100 + k;
            V q = leaf({B, H, L, d}, s + 1), kk = leaf({B, H, L, d}, s + 2), v = leaf({B, H, L, d}, s + 3);
            V tk = leaf(ts, s + 4), tv = leaf(ts, s + 5);
            Array<double> mask = make_mask(var.mask, B, H, L);
            V zr = reference(q, kk, v, tk, tv, k, var, mask);
            V zf = fast(q, kk, v, tk, tv, k, var, mask, fused);
            require_close(zf.value(), zr.value(), 1e-12);
            // gradients: the same random projection through both
            Array<double> r = randn<double>(zr.shape(), s + 6);
            std::vector<V> leaves = {q, kk, v, tk, tv};
            zr.backward(r);
            std::vector<Array<double>> gr;
            for (auto& l : leaves) gr.push_back(l.grad()), l.zero_grad();
            zf.backward(r);
            for (std::size_t i = 0; i < leaves.size(); ++i) {
                INFO("gradient of input " << i);
                require_close(leaves[i].grad(), gr[i], 1e-11);
            }
        }
}

}  // namespace

TEST_CASE("relative/fast_vs_reference/keys_and_values", "[relative]") {
    compare({true, true, false, false, Variant::None});
    compare({true, true, false, false, Variant::Padding});
    compare({true, true, false, false, Variant::Causal});
}
TEST_CASE("relative/fast_vs_reference/per_head", "[relative]") {
    compare({true, true, false, true, Variant::None});
    compare({true, true, false, true, Variant::Padding});
    compare({true, true, false, true, Variant::Causal});
}
TEST_CASE("relative/fast_vs_reference/keys_only", "[relative]") {
    compare({true, false, false, false, Variant::Padding});
    compare({true, false, false, true, Variant::Causal});
}
TEST_CASE("relative/fast_vs_reference/values_only", "[relative]") {
    compare({false, true, false, false, Variant::Causal});
    compare({false, true, false, true, Variant::Padding});
}
TEST_CASE("relative/fast_vs_reference/tied", "[relative]") {
    compare({true, true, true, false, Variant::Padding});
    compare({true, true, true, true, Variant::Causal});
}

TEST_CASE("gradcheck/relative_attention_fast_path", "[gradcheck][relative]") {
    for (bool per_head : {false, true}) {
        Variant var{true, true, false, per_head, Variant::Causal};
        const std::size_t B = 2, H = 2, L = 5, d = 3, k = 1;
        const Shape ts = per_head ? Shape{H, 2 * k + 1, d} : Shape{2 * k + 1, d};
        V q = leaf({B, H, L, d}, 1), kk = leaf({B, H, L, d}, 2), v = leaf({B, H, L, d}, 3);
        V tk = leaf(ts, 4), tv = leaf(ts, 5);
        Array<double> mask = make_mask(var.mask, B, H, L);
        require_gradcheck([&] { return fast(q, kk, v, tk, tv, k, var, mask, true); }, {q, kk, v, tk, tv});
    }
}

TEST_CASE("relative/incremental_offsets", "[relative]") {
    // A query at absolute position t against keys 0..t uses buckets clip(j - t, k): the rows of the
    // full computation.
    const std::size_t L = 7, k = 2, d = 3;
    V q = leaf({1, 1, L, d}, 11), t = leaf({2 * k + 1, d}, 12);
    Array<double> full = rel_logits(q, t, k, L, 0).value();
    for (std::size_t step = 0; step < L; ++step) {
        V qt = slice(q, 2, step, step + 1);
        Array<double> row = rel_logits(qt, t, k, step + 1, step).value();  // (1, 1, 1, step+1)
        for (std::size_t j = 0; j <= step; ++j) REQUIRE(row(0, 0, 0, j) == full(0, 0, step, j));
    }
}

TEST_CASE("relative/offsets_and_clipping_elementwise", "[relative]") {
    // Every (i, j) of the run-based kernels against the definition, for query offsets that put keys
    // before, inside and after the clipping window, Lq != Lk, k = 0 and k beyond the sequence.
    const std::size_t Lq = 3, Lk = 7, d = 2;
    for (std::size_t k : {0, 1, 2, 9})
        for (std::size_t off : {0, 3, 10}) {
            INFO("k=" << k << " offset=" << off);
            const long K = static_cast<long>(k);
            V q = leaf({1, 2, Lq, d}, 20 + k), t = leaf({2, 2 * k + 1, d}, 30 + k);
            V e = leaf({1, 2, Lq, Lk}, 40 + k), a = leaf({1, 2, Lq, Lk}, 50 + k);
            Array<double> fused = add_rel_logits(e, q, t, k, off).value();
            Array<double> plain = rel_logits(q, t, k, Lk, off).value();
            Array<double> z = rel_values(a, t, k, off).value();
            for (std::size_t h = 0; h < 2; ++h)
                for (std::size_t i = 0; i < Lq; ++i) {
                    std::vector<double> zi(d, 0.0);
                    for (std::size_t j = 0; j < Lk; ++j) {
                        const long rel = std::clamp(long(j) - long(i + off), -K, K) + K;
                        double dot = 0;
                        for (std::size_t c = 0; c < d; ++c) {
                            dot += q.value()(0, h, i, c) * t.value()(h, rel, c);
                            zi[c] += a.value()(0, h, i, j) * t.value()(h, rel, c);
                        }
                        REQUIRE(plain(0, h, i, j) == Approx(dot).margin(1e-12));
                        REQUIRE(fused(0, h, i, j) == Approx(e.value()(0, h, i, j) + dot).margin(1e-12));
                    }
                    for (std::size_t c = 0; c < d; ++c) REQUIRE(z(0, h, i, c) == Approx(zi[c]).margin(1e-12));
                }
        }
}
