// Attention's core, softmax(q kᵀ + bias + masks) with dropout, times v, one (batch, head) tile at a time:
// the scores of a tile are made, biased, masked, normalised and multiplied by v while they sit in cache,
// and the backward likewise, so no (B, H, Lq, Lk) tensor is written and read back between the steps but the
// weights the backward needs (and the dropout mask). At the study shapes (64 x 64 scores of heads of 8) the
// separate ops spent most of their time moving those tensors, not computing.
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

#include "autodiff/blas.hpp"
#include "autodiff/dropout_kernel.hpp"
#include "autodiff/expf_libm.hpp"
#include "autodiff/ops.hpp"
#include "autodiff/parallel.hpp"
#include "autodiff/relative_rows.hpp"
#include "autodiff/small_gemm.hpp"
#include "autodiff/vec_math.hpp"

namespace relpos {

namespace {

// The tile products: in cache, so the register kernel where it fits, OpenBLAS otherwise.
template <class T>
void tile_gemm(bool ta, bool tb, std::size_t m, std::size_t n, std::size_t k, const T* A, std::size_t lda, const T* B,
               std::size_t ldb, T beta, T* C, std::size_t ldc) {
    if (blas::small_gemm_fits(m, n, k))
        blas::small_gemm(ta, tb, m, n, k, T(1), A, lda, B, ldb, beta, C, ldc);
    else
        blas::gemm(ta, tb, m, n, k, T(1), A, lda, B, ldb, beta, C, ldc);
}

// The rows of a tile in place: the softmax of each row i over its first n[i] keys (the keys past n[i], beyond a
// causal horizon, get 0; a row whose keys are all blocked is all zeros). The exps of the whole tile in one call
// (rows shifted by their max into scratch, the keys past the horizon as -inf, whose exp is 0), the sums in
// vec::row_sum8's fixed order.
template <class T>
void softmax_tile(T* s, std::size_t Lq, std::size_t Lk, const std::size_t* n, T* scratch) {
    const T ninf = -std::numeric_limits<T>::infinity();
    for (std::size_t i = 0; i < Lq; ++i) {
        const T* si = s + i * Lk;
        T* xi = scratch + i * Lk;
        const T mx = vec::row_max(si, n[i]);
        if (mx == ninf) {
            std::fill(xi, xi + Lk, ninf);
            continue;
        }
        for (std::size_t j = 0; j < n[i]; ++j) xi[j] = si[j] - mx;
        std::fill(xi + n[i], xi + Lk, ninf);
    }
    const std::size_t tile = Lq * Lk;
    if constexpr (std::is_same_v<T, float>) {
        if (vec::use_vector_expf()) {
            vec::expf_libm(scratch, s, tile);
        } else {
            for (std::size_t e = 0; e < tile; ++e) s[e] = std::exp(scratch[e]);
        }
    } else {
        for (std::size_t e = 0; e < tile; ++e) s[e] = std::exp(scratch[e]);
    }
    for (std::size_t i = 0; i < Lq; ++i) {
        T* si = s + i * Lk;
        const T sum = vec::row_sum8(si, n[i]);
        if (sum == T(0)) continue;  // every key blocked: exp(-inf) = 0 throughout
        const T inv = T(1) / sum;
        for (std::size_t j = 0; j < n[i]; ++j) si[j] *= inv;
    }
}

}  // namespace

bool attention_core_takes_bias(const Shape& s, std::size_t B, std::size_t H, std::size_t Lq, std::size_t Lk) {
    if (s.size() < 2 || s.size() > 4 || s[s.size() - 2] != Lq || s[s.size() - 1] != Lk) return false;
    if (s.size() >= 3 && s[s.size() - 3] != 1 && s[s.size() - 3] != H) return false;
    return s.size() < 4 || s[0] == 1 || s[0] == B;
}

template <class T>
Var<T> attention_core(const Var<T>& q, const Var<T>& k, const Var<T>& v, const Var<T>& bias,
                      const Array<T>* key_padding, const Array<T>* attn, bool causal, std::size_t q_offset,
                      double drop_p, Rng* rng, Var<T>* weights, const RelativeLogits<T>* rel, bool v_tokens) {
    const Shape sq = q.shape(), sk = k.shape(), sv = v.shape();
    const bool v_ok = v_tokens ? sv.size() == 3 && sv[0] == sk[0] && sv[1] == sk[2] && sk[1] > 0 && sv[2] % sk[1] == 0
                               : sv.size() == 4 && sv[0] == sk[0] && sv[1] == sk[1] && sv[2] == sk[2];
    if (sq.size() != 4 || sk.size() != 4 || sk[0] != sq[0] || sk[1] != sq[1] || sk[3] != sq[3] || !v_ok)
        shape_fail("attention_core", fmt::format("q {}, k {} and v {} must be (B, H, Lq, d), (B, H, Lk, d) and {}",
                                                 shape_str(sq), shape_str(sk), shape_str(sv),
                                                 v_tokens ? "(B, Lk, H·dv)" : "(B, H, Lk, dv)"));
    const std::size_t B = sq[0], H = sq[1], Lq = sq[2], d = sq[3], Lk = sk[2], dv = v_tokens ? sv[2] / H : sv[3];
    // Where tile t = (b, h) of v and of the result starts, and their row strides: per head (B, H, L, dv), or token
    // by token (B, L, H·dv) with v_tokens.
    const std::size_t ldv = v_tokens ? H * dv : dv;
    const auto v_at = [=](std::size_t t) { return v_tokens ? (t / H) * Lk * H * dv + (t % H) * dv : t * Lk * dv; };
    const auto o_at = [=](std::size_t t) { return v_tokens ? (t / H) * Lq * H * dv + (t % H) * dv : t * Lq * dv; };
    std::size_t bias_b = 0, bias_h = 0;  // the bias's strides over batch and head (0: broadcast)
    if (bias.defined()) {
        if (!attention_core_takes_bias(bias.shape(), B, H, Lq, Lk))
            shape_fail("attention_core", fmt::format("bias {} must be (B or 1, H or 1, Lq={}, Lk={}), leading ones "
                                                     "optional", shape_str(bias.shape()), Lq, Lk));
        Shape sb = bias.shape();
        sb.insert(sb.begin(), 4 - sb.size(), 1);
        bias_h = sb[1] == 1 ? 0 : Lq * Lk;
        bias_b = sb[0] == 1 ? 0 : sb[1] * Lq * Lk;
    }
    if (key_padding && shape_of(*key_padding) != Shape{B, Lk})
        shape_fail("attention_core", fmt::format("key padding mask must be (B={}, Lk={}), got {}", B, Lk,
                                                 shape_str(shape_of(*key_padding))));
    if (attn && shape_of(*attn) != Shape{Lq, Lk})
        shape_fail("attention_core", fmt::format("attention mask must be (Lq={}, Lk={}), got {}", Lq, Lk,
                                                 shape_str(shape_of(*attn))));
    std::size_t rk = 0, R = 0, dr = 0;  // the relative term's k, table rows 2k+1, head size
    if (rel) {
        const Shape srq = rel->q.shape(), st = rel->table.shape();
        rk = rel->k;
        R = 2 * rk + 1;
        if (st.size() != 3 || st[0] != H || st[1] != R || srq.size() != 4 || srq[0] != B || srq[1] != H ||
            srq[2] != Lq || srq[3] != st[2])
            shape_fail("attention_core", fmt::format("relative term: query {} and table {} must be (B={}, H={}, Lq={}, d) "
                                                     "and (H, 2k+1={}, d)", shape_str(srq), shape_str(st), B, H, Lq, R));
        dr = st[2];
    }
    if (drop_p < 0 || drop_p >= 1) throw std::invalid_argument(fmt::format("dropout: p must be in [0, 1), got {}", drop_p));
    const bool drop = rng && drop_p > 0;
    const std::size_t tile = Lq * Lk;
    // The weights (B, H, Lq, Lk) are kept for the backward; the dropout mask is drawn for the whole tensor
    // first, in order, as the dropout op draws it (the same stream gives the same mask).
    Array<T> w = uninit<T>({B, H, Lq, Lk});
    std::vector<std::uint8_t> keep;
    if (drop) {
        keep.resize(B * H * tile);
        detail::dropout_mask(keep.size(), drop_p, *rng, keep.data());
    }
    const T drop_scale = drop ? detail::dropout_scale<T>(drop_p) : T(1);
    Array<T> out = v_tokens ? uninit<T>({B, Lq, H * dv}) : uninit<T>({B, H, Lq, dv});
    const T* Q = q.data();
    const T* K = k.data();
    const T* V = v.data();
    const T* Bias = bias.defined() ? bias.data() : nullptr;
    T* W = w.data();
    T* O = out.data();
    // The relative term's tables transposed once, (H, d, 2k+1), so that each tile's product reads them as they are.
    std::vector<T> tab_t(rel ? H * dr * R : 0);
    if (rel)
        for (std::size_t h = 0; h < H; ++h)
            for (std::size_t r = 0; r < R; ++r)
                for (std::size_t c = 0; c < dr; ++c) tab_t[(h * dr + c) * R + r] = rel->table.data()[(h * R + r) * dr + c];
    const T* RQ = rel ? rel->q.data() : nullptr;
    parallel::parallel_for(B * H, 1, [&](std::size_t t0, std::size_t t1) {
        std::vector<T> dropped(drop ? tile : 0), scratch(tile), rq(Lq * R);
        std::vector<std::size_t> nkeys(Lq);
        for (std::size_t t = t0; t < t1; ++t) {
            const std::size_t b = t / H, h = t % H;
            T* s = W + t * tile;
            tile_gemm(false, true, Lq, Lk, d, Q + t * Lq * d, d, K + t * Lk * d, d, T(0), s, Lk);
            if (rel) {  // + rel.q · table[bucket]: the (Lq, 2k+1) product, then its gather
                tile_gemm(false, false, Lq, R, dr, RQ + t * Lq * dr, dr, tab_t.data() + h * dr * R, R, T(0), rq.data(), R);
                for (std::size_t i = 0; i < Lq; ++i)
                    detail::gather_row(detail::row_runs(i, Lk, rk, q_offset), Lk, R, rq.data() + i * R, s + i * Lk, true);
            }
            for (std::size_t i = 0; i < Lq; ++i) {
                T* si = s + i * Lk;
                const std::size_t n = nkeys[i] = causal ? std::min(Lk, q_offset + i + 1) : Lk;
                if (Bias) {
                    const T* bi = Bias + b * bias_b + h * bias_h + i * Lk;
                    for (std::size_t j = 0; j < n; ++j) si[j] += bi[j];
                }
                if (key_padding) {
                    const T* kp = key_padding->data() + b * Lk;
                    for (std::size_t j = 0; j < n; ++j) si[j] += kp[j];
                }
                if (attn) {
                    const T* am = attn->data() + i * Lk;
                    for (std::size_t j = 0; j < n; ++j) si[j] += am[j];
                }
            }
            softmax_tile(s, Lq, Lk, nkeys.data(), scratch.data());
            const T* p = s;
            if (drop) {
                const std::uint8_t* kt = keep.data() + t * tile;
                for (std::size_t e = 0; e < tile; ++e) dropped[e] = s[e] * (T(kt[e]) * drop_scale);
                p = dropped.data();
            }
            tile_gemm(false, false, Lq, dv, Lk, p, Lk, V + v_at(t), ldv, T(0), O + o_at(t), ldv);
        }
    });
    if (weights) *weights = Var<T>(w);  // the weights before dropout, as attention_softmax's output
    std::vector<Var<T>> parents = {q, k, v};
    if (bias.defined()) parents.push_back(bias);
    const bool has_bias = bias.defined();
    if (rel) {
        parents.push_back(rel->q);
        parents.push_back(rel->table);
    }
    return make_result<T>(
        std::move(out), parents,
        [B, H, Lq, Lk, d, dv, tile, bias_b, bias_h, w = std::move(w), keep = std::move(keep), drop_scale, has_bias,
         rk, R, dr, q_offset, ldv, v_at, o_at](Node<T>& self) {
            Node<T>& NQ = *self.parents[0];
            Node<T>& NK = *self.parents[1];
            Node<T>& NV = *self.parents[2];
            Node<T>* NB = has_bias ? self.parents[3].get() : nullptr;
            Node<T>* NRQ = R ? self.parents[has_bias ? 4 : 3].get() : nullptr;
            Node<T>* NRT = R ? self.parents[has_bias ? 5 : 4].get() : nullptr;
            const bool drop = !keep.empty();
            const T* G = self.grad.data();
            const T* Q = NQ.value.data();
            const T* K = NK.value.data();
            const T* V = NV.value.data();
            const T* W = w.data();
            T *dQ = nullptr, *dK = nullptr, *dV = nullptr;
            bool accQ = false, accK = false, accV = false;
            if (NQ.requires_grad) std::tie(dQ, accQ) = grad_target(NQ);
            if (NK.requires_grad) std::tie(dK, accK) = grad_target(NK);
            if (NV.requires_grad) std::tie(dV, accV) = grad_target(NV);
            // The bias's gradient is the scores' gradient, summed over what it broadcasts across: a full
            // (B, H, ...) bias takes it tile by tile; a broadcast one gets the tiles' scores gradients summed in
            // tile order afterwards (the same numbers at any thread count).
            const bool bias_grad = NB && NB->requires_grad;
            const bool bias_full = bias_grad && bias_b != 0 && bias_h != 0;
            T* dBias = nullptr;
            bool accB = false;
            if (bias_full) std::tie(dBias, accB) = grad_target(*NB);
            std::vector<T> dS_all(bias_grad && !bias_full ? B * H * tile : 0);
            // The relative term's gradients: its query's tile by tile; its table's summed over the batch in order
            // b = 0, 1, ... for each head, so the tiles are walked head by head, each head on one thread (the same
            // numbers at any thread count).
            T* dRQ = nullptr;
            bool accRQ = false;
            if (NRQ && NRQ->requires_grad) std::tie(dRQ, accRQ) = grad_target(*NRQ);
            T* dTab = NRT && NRT->requires_grad ? grad_ptr(*NRT) : nullptr;
            const T* RQ = NRQ ? NRQ->value.data() : nullptr;
            const T* Tab = NRT ? NRT->value.data() : nullptr;
            const bool rel_grad = dRQ || dTab;
            const T zq = accQ ? T(1) : T(0), zk = accK ? T(1) : T(0), zv = accV ? T(1) : T(0), zrq = accRQ ? T(1) : T(0);
            const bool by_head = dTab != nullptr;
            parallel::parallel_for(by_head ? H : B * H, 1, [&](std::size_t u0, std::size_t u1) {
                std::vector<T> dp(tile), dropped(drop ? tile : 0), drq(rel_grad ? Lq * R : 0);
                const std::size_t n_tiles = by_head ? (u1 - u0) * B : u1 - u0;
                for (std::size_t u = 0; u < n_tiles; ++u) {
                    // by head: the tiles (b, h) for h in [u0, u1), b = 0 .. B-1; otherwise tiles u0 .. u1-1
                    const std::size_t t = by_head ? (u % B) * H + u0 + u / B : u0 + u;
                    const std::size_t h = t % H;
                    const T* p = W + t * tile;
                    const T* g = G + o_at(t);
                    const std::uint8_t* kt = drop ? keep.data() + t * tile : nullptr;
                    const T* pd = p;  // the weights after dropout
                    if (drop) {
                        for (std::size_t e = 0; e < tile; ++e) dropped[e] = p[e] * (T(kt[e]) * drop_scale);
                        pd = dropped.data();
                    }
                    if (dV) tile_gemm(true, false, Lk, dv, Lq, pd, Lk, g, ldv, zv, dV + v_at(t), ldv);  // pdᵀ g
                    if (!dQ && !dK && !bias_grad && !rel_grad) continue;
                    tile_gemm(false, true, Lq, Lk, dv, g, ldv, V + v_at(t), ldv, T(0), dp.data(), Lk);  // g vᵀ
                    if (drop)
                        for (std::size_t e = 0; e < tile; ++e) dp[e] = dp[e] * (T(kt[e]) * drop_scale);
                    // softmax: ds_j = p_j (dp_j - sum_k dp_k p_k); blocked keys have p = 0 and get 0
                    for (std::size_t i = 0; i < Lq; ++i) {
                        const T* pi = p + i * Lk;
                        T* di = dp.data() + i * Lk;
                        const T dot = vec::row_dot8(di, pi, Lk);
                        for (std::size_t j = 0; j < Lk; ++j) di[j] = pi[j] * (di[j] - dot);
                    }
                    const T* ds = dp.data();
                    if (dQ) tile_gemm(false, false, Lq, d, Lk, ds, Lk, K + t * Lk * d, d, zq, dQ + t * Lq * d, d);
                    if (dK) tile_gemm(true, false, Lk, d, Lq, ds, Lk, Q + t * Lq * d, d, zk, dK + t * Lk * d, d);
                    if (rel_grad) {  // the gather's transpose into (Lq, 2k+1), then its two products
                        std::fill(drq.begin(), drq.end(), T(0));
                        for (std::size_t i = 0; i < Lq; ++i)
                            detail::scatter_row(detail::row_runs(i, Lk, rk, q_offset), Lk, R, ds + i * Lk, drq.data() + i * R);
                        if (dRQ)
                            tile_gemm(false, false, Lq, dr, R, drq.data(), R, Tab + h * R * dr, dr, zrq, dRQ + t * Lq * dr, dr);
                        if (dTab)
                            tile_gemm(true, false, R, dr, Lq, drq.data(), R, RQ + t * Lq * dr, dr, T(1), dTab + h * R * dr, dr);
                    }
                    if (bias_full) {
                        T* db = dBias + t * tile;
                        if (accB)
                            for (std::size_t e = 0; e < tile; ++e) db[e] += ds[e];
                        else
                            std::copy_n(ds, tile, db);
                    } else if (bias_grad) {
                        std::copy_n(ds, tile, dS_all.data() + t * tile);
                    }
                }
            });
            if (bias_grad && !bias_full) {  // sum over the broadcast axes, in tile order
                T* db = grad_ptr(*NB);
                for (std::size_t t = 0; t < B * H; ++t) {
                    const std::size_t b = t / H, h = t % H;
                    T* dst = db + b * bias_b + h * bias_h;
                    const T* src = dS_all.data() + t * tile;
                    for (std::size_t e = 0; e < tile; ++e) dst[e] += src[e];
                }
            }
        },
        "attention_core");
}

#define RELPOS_INST(T)                                                                                          \
    template Var<T> attention_core(const Var<T>&, const Var<T>&, const Var<T>&, const Var<T>&, const Array<T>*, \
                                   const Array<T>*, bool, std::size_t, double, Rng*, Var<T>*, const RelativeLogits<T>*, \
                                   bool);
RELPOS_INST(float)
RELPOS_INST(double)
#undef RELPOS_INST

}  // namespace relpos
