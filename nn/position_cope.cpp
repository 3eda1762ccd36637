// `cope`: contextual position encoding (Golovneva et al. 2024, "Contextual Position Encoding: Learning to
// Count What's Important"; reference code facebookresearch/RAM, projects/cope). Positions are counted from
// the context instead of the token indices: per head, a gate for every query-key pair decides whether the
// key counts, and a key's position relative to the query is the number of counted keys between them,
//
//   g_ij = σ(q_i · k_j)                     (eq. 3; q_i · k_j the attention logit, here already / sqrt(d))
//   p_ij = Σ_{t = j .. i} g_it              (eq. 4; a cumulative sum from the right, so p_ii = g_ii)
//   e[p] = (1 - (p - ⌊p⌋)) e[⌊p⌋] + (p - ⌊p⌋) e[⌈p⌉],   p clamped to npos_max - 1        (eq. 5)
//   a_ij = softmax_j(q_i · k_j + q_i · e[p_ij])                                         (eq. 6)
//
// with e a learned (d, npos_max) table per attention layer, shared by its heads (the reference's pos_emb,
// (1, head_dim, npos_max)). As the reference, q_i · e[p] interpolates the logits z_i = q_i · e of the integer
// positions (one (Lq, npos_max) product per head), not the embeddings. relpos's q is scaled by 1/sqrt(d)
// before every logit term (the reference multiplies e by the unscaled query): the same model, e absorbing
// sqrt(d). The table starts at N(0, 0.02²) (the reference starts at zeros, which gives the gates no
// gradient in the first step and makes a gradient check blind to them).
//
// Hook 3, through add_logit_bias: the positions depend on the logits themselves, so the bias is computed
// from them in one fused op (cope_add below, forward and backward side by side). The masks come after
// the hooks; the gates of keys a causal query cannot see are not summed (the reference's σ(-inf) = 0), and
// right-padding never lies between a real query and a real key. A step of incremental decoding sees the
// row of its query over the cached keys, so it gets the row of the full pass.
//
// Causal (decoder) attention is the paper's. Bidirectional (encoder) attention, which the paper does not
// define: keys after the query count to the right, p_ij = Σ_{t = i .. j} g_it for j > i, and read a table of
// their own, e' (`cope_emb_right`), so that left and right stay apart (one table would give a key d counted
// keys to the left and one d to the right the same term). Self-attention only.
//
// There are no integer positions to draw: CoPE declares reads_positions() false, so `randomized` is refused
// (make_position) and the generic tests check that a position map changes nothing.
#include <algorithm>
#include <cmath>

#include "nn/position.hpp"

namespace relpos::nn {

namespace {

// e[p] of a row z (npos_max logits q·e) at the clamped count p: the reference's
// logits_ceil * w + logits_floor * (1 - w), w = p - ⌊p⌋.
template <class T>
T interpolate(const T* z, T p) {
    const T f = std::floor(p), w = p - f;
    return z[std::size_t(std::ceil(p))] * w + z[std::size_t(f)] * (T(1) - w);
}

// logits (B, H, Lq, Lk) + the CoPE term; z (B, H, Lq, Z): q·e in columns [0, npos), and in bidirectional
// attention q·e' in [npos, 2 npos). The query of row i is key q_offset + i.
template <class T>
Var<T> cope_add(const Var<T>& logits, const Var<T>& z, std::size_t npos, bool causal, std::size_t q_offset) {
    const std::size_t B = logits.dim(0), H = logits.dim(1), Lq = logits.dim(2), Lk = logits.dim(3), Z = z.dim(3);
    const std::size_t rows = B * H * Lq;
    const T top = T(npos - 1);
    Array<T> out = uninit<T>(logits.shape());
    Array<T> gate = uninit<T>(logits.shape());   // g_ij
    Array<T> count = zeros<T>(logits.shape());  // p_ij before the clamp (0 where the term is not added)
    for (std::size_t r = 0; r < rows; ++r) {
        const T* l = logits.data() + r * Lk;
        const T* zr = z.data() + r * Z;
        T *o = out.data() + r * Lk, *g = gate.data() + r * Lk, *c = count.data() + r * Lk;
        const std::size_t last = std::min(q_offset + r % Lq, Lk - 1);  // the query's own key
        for (std::size_t j = 0; j < Lk; ++j) g[j] = T(1) / (T(1) + std::exp(-l[j]));
        T acc = 0;
        for (std::size_t j = last + 1; j-- > 0;) {  // p_ij = Σ_{t=j..i} g_it
            acc += g[j];
            c[j] = acc;
            o[j] = l[j] + interpolate(zr, std::min(acc, top));
        }
        acc = g[last];
        for (std::size_t j = last + 1; j < Lk; ++j) {
            if (causal) {  // masked later: nothing added, nothing counted
                o[j] = l[j];
                continue;
            }
            acc += g[j];  // p_ij = Σ_{t=i..j} g_it, read from e'
            c[j] = acc;
            o[j] = l[j] + interpolate(zr + npos, std::min(acc, top));
        }
    }
    return make_result<T>(
        std::move(out), {logits, z},
        [=, gate = std::move(gate), count = std::move(count)](Node<T>& self) {
            Node<T>& nl = *self.parents[0];
            Node<T>& nz = *self.parents[1];
            const T* go = self.grad.data();
            Array<T> dl = uninit<T>({B, H, Lq, Lk}), dz = zeros<T>({B, H, Lq, Z});
            std::vector<T> dp(Lk);
            for (std::size_t r = 0; r < rows; ++r) {
                const T *gr = go + r * Lk, *g = gate.data() + r * Lk, *c = count.data() + r * Lk;
                const T* zv = nz.value.data() + r * Z;
                T *dlr = dl.data() + r * Lk, *dzr = dz.data() + r * Z;
                const std::size_t last = std::min(q_offset + r % Lq, Lk - 1);
                for (std::size_t j = 0; j < Lk; ++j) {
                    dlr[j] = gr[j];  // the logits pass through
                    dp[j] = 0;
                    if (causal && j > last) continue;
                    const std::size_t off = j > last ? npos : 0;
                    const T p = std::min(c[j], top), f = std::floor(p), w = p - f;
                    const std::size_t lo = std::size_t(f), hi = std::size_t(std::ceil(p));
                    dzr[off + lo] += gr[j] * (T(1) - w);
                    dzr[off + hi] += gr[j] * w;
                    if (c[j] <= top) dp[j] = gr[j] * (zv[off + hi] - zv[off + lo]);  // the clamp passes no gradient above
                }
                // left: p_ij = Σ_{t=j..i} g_it, so dg_t = Σ_{j <= t} dp_j
                T acc = 0;
                for (std::size_t t = 0; t <= last; ++t) {
                    acc += dp[t];
                    dlr[t] += acc * g[t] * (T(1) - g[t]);
                }
                if (causal) continue;
                // right: p_ij = g_ii + Σ_{t=i+1..j} g_it, so dg_t = Σ_{j >= t} dp_j for t > i, and g_ii collects them all
                acc = 0;
                for (std::size_t t = Lk; t-- > last + 1;) {
                    acc += dp[t];
                    dlr[t] += acc * g[t] * (T(1) - g[t]);
                }
                dlr[last] += acc * g[last] * (T(1) - g[last]);
            }
            if (nl.requires_grad) accumulate_grad(nl, dl);
            if (nz.requires_grad) accumulate_grad(nz, dz);
        },
        "cope_add");
}

}  // namespace

template <class T>
class CopeAttention : public AttentionPosition<T> {
public:
    CopeAttention(std::size_t npos, std::size_t head_dim, bool causal, Rng& init_rng) : npos_(npos), causal_(causal) {
        auto init = [&] {
            Array<T> e = uninit<T>({head_dim, npos});  // (d, npos_max)
            for (auto& v : e) v = T(init_rng.normal() * 0.02);
            return e;
        };
        emb_ = this->register_parameter("cope_emb", init());
        if (!causal_) emb_right_ = this->register_parameter("cope_emb_right", init());
    }

    Var<T> add_logit_bias(const Var<T>& logits, const Var<T>& q, std::size_t q_offset) override {
        // z = q · e (B, H, Lq, npos), or q · [e e'] (B, H, Lq, 2 npos)
        const Var<T> z = matmul(q, causal_ ? emb_ : concat<T>({emb_, emb_right_}, 1));
        return cope_add(logits, z, npos_, causal_, q_offset);
    }
    // What add_logit_bias adds, as the interface defines logit_bias: the term alone.
    Var<T> logit_bias(const Var<T>& q, std::size_t lk, std::size_t q_offset) override {
        throw std::logic_error("cope: the term depends on the logits; attention calls add_logit_bias");
    }

private:
    std::size_t npos_;
    bool causal_;
    Var<T> emb_, emb_right_;  // e, e' (d, npos_max)
};

template <class T>
class CopePosition : public PositionEncoding<T> {
public:
    CopePosition(Options& o, const PositionContext&) : npos_(std::size_t(o.get_int("npos_max", 64, 2, 1 << 16))) {}
    std::shared_ptr<AttentionPosition<T>> for_attention(const AttentionSite& site, Rng& init_rng) override {
        if (site.kind == AttentionSite::Cross) return nullptr;
        return std::make_shared<CopeAttention<T>>(npos_, site.head_dim, site.causal(), init_rng);
    }
    bool reads_positions() const override { return false; }

private:
    std::size_t npos_;
};

void register_cope(PositionRegistry& r) {
    r.add(position_entry<CopePosition>(
        "cope", "contextual positions: gated counts of the keys between query and key (Golovneva et al. 2024)"));
}

}  // namespace relpos::nn
