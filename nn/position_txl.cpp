// `txl`: the relative position encoding of Transformer-XL (Dai et al. 2019, "Transformer-XL: Attentive
// Language Models Beyond a Fixed-Length Context", sec. 3.3), as Ruoss et al. 2023 use it for their
// "relative" rows (google-deepmind/randomized_positional_encodings, models/positional_encodings.py,
// compute_attention_with_relative_encodings). No position embeddings; for head h, query i and key j
// the whole attention logit is
//
//   e_ij = [ (q_i + u_h) · k_j  +  (q_i + v_h) · (W_R r_{j-i})_h ] / sqrt(d)
//
// with q_i, k_j the head's query and key (q_proj / k_proj outputs, before any scaling), d the head size,
// u ("content bias") and v ("position bias") learned (H, d) per layer, W_R a learned (D, D) projection per
// layer (D = H·d = d_model, no bias, stored (in, out) as every Linear here; (W_R r)_h are its output
// columns h·d .. h·d + d - 1), and r_t the sinusoidal encoding of the relative distance t:
//
//   r_t[k] = sin(t · max_time^(-2k/D)),   r_t[D/2 + k] = cos(t · max_time^(-2k/D)),   k = 0 .. D/2 - 1
//
// (sin and cos in two halves, not interleaved, as the reference's sinusoid_position_encoding). The whole
// logit equals the reference's content_logits + relative_logits, times the 1/sqrt(d) its attention
// applies to the sum. Checked in the reference:
//   - the distance is key minus query, t = j - i: its bidirectional path lays out r_{-T} .. r_{T-1}
//     (add_negative_side, so keys on both sides get their own encodings) and its relative shift puts
//     r_{j-i} at (i, j). Dai et al. write R_{i-j}; since r_{-t} flips only the sin half, the two are the
//     same model up to the sign of W_R's sin rows.
//   - its causal path (causal=True) lays out r_0 .. r_{T-1} ascending and the causal shift gives r_{T-1-(i-j)}
//     at (i, j): an offset that depends on the sequence length T, so a prefix's logits change as the
//     sequence grows and incremental decoding could not equal the full pass (Transformer-XL's own code lays
//     the positions out descending, which gives r_{i-j}). Ruoss et al.'s experiments are encoder-only
//     (bidirectional), which that path never runs. relpos uses t = j - i in causal self-attention too;
//     future keys (masked anyway) get a positional term of 0, as alibi and kerple.
//   - u, v ~ N(0, 0.02²) as the reference (haiku RandomNormal(stddev=0.02)). W_R is Xavier-uniform like
//     relpos's other projections: std 1/sqrt(D), the nominal scale of the reference's hk.Linear default
//     (a normal truncated at 2 std of 1/sqrt(fan_in)).
//
// relpos scales q by 1/sqrt(d) before hook 2 (nn/attention.cpp), so the terms are split over two hooks:
//   hook 2 (queries_keys):  q <- q + u/sqrt(d), so attention's own q·kᵀ is the content term (q + u)·k/sqrt(d),
//                           at no cost beyond one broadcast add;
//   hook 3 (logit bias):    the query it receives is (q + u)/sqrt(d), so the positional term is
//                           (q' + (v - u)/sqrt(d)) · (W_R r_{j-i})_h = (q + v) · (W_R r_{j-i})_h / sqrt(d).
// Encodings listed after txl that read q (rope, shaw) see q + u/sqrt(d). List rope before txl if both: after
// it, rope would rotate q + u/sqrt(d) and txl's hook 3 would no longer receive q + u/sqrt(d).
//
// The positional term is per (head, distance), so it is never an (L, L, d) tensor: with consecutive positions
// the distances of a (query, key) block are lo = -(q_offset + Lq - 1) .. hi = Lk - 1 - q_offset (hi = 0 in
// the causal decoder: later keys are masked), at most Lq + Lk - 1 of them. Their sinusoids (n, D) are
// projected by W_R once per layer into (H, n, d), and Shaw's bucketed kernel (add_rel_logits: an
// (Lq, 2K+1) product per head, then a gather) adds q'_i · P[j - i] to the logits, the table zero-padded to the
// symmetric 2K+1 rows it expects. An incremental-decoding step projects its q_offset + 1 rows again (hooks keep
// no caches). Randomized positions (Ruoss et al. 2023; option `randomized`): the distance is
// m(j) - m(q_offset + i) between mapped positions, no longer a Toeplitz pattern, so the distinct distances
// are projected and their rows gathered for every (head, query, key), an (H·Lq, Lk, d) tensor, as Shaw's
// randomized path. The reference's own noisy variant, NOISY_RELATIVE, instead samples a random increasing
// relabelling of the distances: option `randomized_form: distances` (PositionMap::distance), which keeps the
// Toeplitz pattern, so the table above holds the drawn distances' rows and the fused core takes it.
//
// Sites: encoder and decoder self-attention; encoder-decoder attention with cross_attention: true (not in
// the reference), with t = j - i between the source key j and the target query i and u, v, W_R of its own.
// Parameters per attention layer: <layer>.self_attn.txl_u (H, d), txl_v (H, d), txl_w_r (D, D).
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "nn/position.hpp"

namespace relpos::nn {

namespace {
// r_t for each distance t of `dists`: (n, D), sin half then cos half.
template <class T>
Array<T> relative_sinusoids(const std::vector<long>& dists, const std::vector<double>& inv_freq) {
    const std::size_t half = inv_freq.size(), D = 2 * half;
    Array<T> s = uninit<T>({dists.size(), D});
    T* p = s.data();
    for (long t : dists) {
        for (std::size_t k = 0; k < half; ++k) p[k] = T(std::sin(double(t) * inv_freq[k]));
        for (std::size_t k = 0; k < half; ++k) p[half + k] = T(std::cos(double(t) * inv_freq[k]));
        p += D;
    }
    return s;
}
}  // namespace

template <class T>
class TxlAttention : public AttentionPosition<T> {
public:
    bool bias_only() const override { return true; }
    TxlAttention(double max_time, const AttentionSite& s, Rng& rng, std::shared_ptr<const PositionMap> map)
        : H_(s.heads), d_(s.head_dim), causal_(s.causal()), scale_(T(1.0 / std::sqrt(double(s.head_dim)))),
          map_(std::move(map)) {
        const std::size_t D = H_ * d_;
        for (std::size_t k = 0; k < D / 2; ++k) inv_freq_.push_back(std::pow(max_time, -2.0 * double(k) / double(D)));
        u = this->register_parameter("txl_u", normal_init<T>({H_, d_}, 0.02, rng));
        v = this->register_parameter("txl_v", normal_init<T>({H_, d_}, 0.02, rng));
        w_r = this->register_parameter("txl_w_r", xavier_uniform<T>({D, D}, D, D, rng));
    }

    // Hook 2: q (already / sqrt(d)) + u / sqrt(d): attention's q·kᵀ becomes the content term (q + u)·k / sqrt(d).
    void queries_keys(Var<T>& q, Var<T>&, std::size_t, std::size_t) override {
        q = q + reshape(u * scale_, {1, H_, 1, d_});
    }

    // Hook 3, given the query of hook 2: (q + v)·(W_R r_{j-i})_h / sqrt(d) -> (B, H, Lq, Lk)
    Var<T> logit_bias(const Var<T>& q, std::size_t lk, std::size_t q_offset) override {
        if (!is_identity(map_)) return mapped_term(q, lk, q_offset);
        const Table t = consecutive_table(q.dim(2), lk, q_offset);
        return rel_logits(position_query(q), t.rows, t.k, lk, q_offset);
    }
    // The same term for attention's fused core, as Shaw's bucketed form (consecutive positions only).
    bool relative_logits(const Var<T>& q, std::size_t lk, std::size_t q_offset, RelativeLogits<T>& out) override {
        if (!is_identity(map_)) return false;
        const Table t = consecutive_table(q.dim(2), lk, q_offset);
        out.q = position_query(q);
        out.table = t.rows;
        out.k = t.k;
        return true;
    }
    Var<T> add_logit_bias(const Var<T>& logits, const Var<T>& q, std::size_t q_offset) override {
        const std::size_t lk = logits.dim(3);
        if (!is_identity(map_)) return logits + mapped_term(q, lk, q_offset);
        const Table t = consecutive_table(q.dim(2), lk, q_offset);
        return add_rel_logits(logits, position_query(q), t.rows, t.k, q_offset);  // no (B, H, Lq, Lk) temporary
    }

    Var<T> u, v;  // (H, d): content bias, position bias
    Var<T> w_r;   // (D, D), (in, out)

private:
    struct Table {
        Var<T> rows;  // (H, 2k+1, d): row k + t holds (W_R r_t)_h
        std::size_t k;
    };

    // q' = q + (v - u) / sqrt(d), (B, H, Lq, d): hook 2 left q + u / sqrt(d).
    Var<T> position_query(const Var<T>& q) const { return q + reshape((v - u) * scale_, {1, H_, 1, d_}); }

    // (W_R r_t)_h for the distances `dists`: (H, n, d)
    Var<T> projected(const std::vector<long>& dists) const {
        const std::size_t n = dists.size();
        const Var<T> p = matmul(Var<T>(relative_sinusoids<T>(dists, inv_freq_)), w_r);  // (n, D)
        return permute_view(p, {n, H_, d_}, {1, 0, 2});
    }

    // Consecutive positions: the distances lo .. hi projected, zero rows out to the symmetric table of
    // rel_logits (bucket clip(j - i, k) + k), k = max(-lo, hi). In the causal decoder hi = 0, and later keys
    // (masked) fall on zero rows.
    Table consecutive_table(std::size_t lq, std::size_t lk, std::size_t q_offset) const {
        const long lo = -long(q_offset + lq - 1), hi = causal_ ? 0L : long(lk) - 1 - long(q_offset);
        const std::size_t k = std::size_t(std::max(-lo, std::max(hi, 0L)));
        std::vector<long> dists;  // row k + t: the sinusoids of offset t's distance (t itself, or its drawn one)
        for (long t = lo; t <= hi; ++t) dists.push_back(relabelled(map_, t));
        std::vector<Var<T>> parts;
        if (const std::size_t before = std::size_t(long(k) + lo)) parts.push_back(Var<T>(zeros<T>({H_, before, d_})));
        parts.push_back(projected(dists));
        if (const std::size_t after = std::size_t(long(k) - hi)) parts.push_back(Var<T>(zeros<T>({H_, after, d_})));
        return {parts.size() == 1 ? parts[0] : concat(parts, 1), k};
    }

    // Randomized positions: t = m(j) - m(q_offset + i). The distinct distances of the visible (query, key)
    // pairs are projected; each (head, query, key) gathers its row (a zero row for masked later keys), and
    // one (B, d) x (d, Lk) product per head and query gives the term.
    Var<T> mapped_term(const Var<T>& q, std::size_t lk, std::size_t q_offset) const {
        const std::size_t B = q.dim(0), lq = q.dim(2);
        std::vector<long> dist(lq * lk);
        std::vector<bool> visible(lq * lk);
        std::vector<long> distinct;
        for (std::size_t i = 0; i < lq; ++i) {
            const long qi = long(mapped(map_, q_offset + i));
            for (std::size_t j = 0; j < lk; ++j) {
                const long t = long(mapped(map_, j)) - qi;
                dist[i * lk + j] = t;
                visible[i * lk + j] = !(causal_ && t > 0);
                if (visible[i * lk + j]) distinct.push_back(t);
            }
        }
        std::sort(distinct.begin(), distinct.end());
        distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
        const std::size_t n = distinct.size(), rows = n + 1;  // + a zero row
        const Var<T> table = concat<T>({projected(distinct), Var<T>(zeros<T>({H_, 1, d_}))}, 1);  // (H, n + 1, d)
        std::vector<std::int32_t> ids(H_ * lq * lk);
        for (std::size_t h = 0; h < H_; ++h)
            for (std::size_t x = 0; x < lq * lk; ++x) {
                const std::size_t r = visible[x] ? std::size_t(std::lower_bound(distinct.begin(), distinct.end(), dist[x]) -
                                                               distinct.begin())
                                                 : n;
                ids[h * lq * lk + x] = std::int32_t(h * rows + r);
            }
        const Var<T> E = embedding(reshape(table, {H_ * rows, d_}), ids, {H_ * lq, lk});      // (H*Lq, Lk, d)
        const Var<T> qr = permute_view(position_query(q), q.shape(), {1, 2, 0, 3}, {H_ * lq, B, d_});
        return permute_view(matmul(qr, E, false, true), {H_, lq, B, lk}, {2, 0, 1, 3});      // (B, H, Lq, Lk)
    }

    std::size_t H_, d_;
    bool causal_;
    T scale_;                       // 1 / sqrt(d)
    std::vector<double> inv_freq_;  // max_time^(-2k/D), k = 0 .. D/2 - 1
    std::shared_ptr<const PositionMap> map_;
};

template <class T>
class TxlPosition : public PositionEncoding<T> {
public:
    bool supports_random_distances() const override { return true; }
    TxlPosition(Options& o, const PositionContext& c)
        : max_time_(o.get_double("max_time", 10000.0, 2.0, 1e12)), cross_(o.get_bool("cross_attention", false)) {
        if (c.d_model % 2 != 0)
            o.fail("type", fmt::format("txl's sinusoids r_t hold a sin and a cos half, so d_model = {} must be even",
                                       c.d_model));
    }
    std::shared_ptr<AttentionPosition<T>> for_attention(const AttentionSite& site, Rng& rng) override {
        if (site.kind == AttentionSite::Cross && !cross_) return nullptr;
        return std::make_shared<TxlAttention<T>>(max_time_, site, rng, this->position_map_handle(site));
    }

private:
    double max_time_;
    bool cross_;
};

void register_txl(PositionRegistry& r) {
    r.add(position_entry<TxlPosition>(
        "txl", "Transformer-XL relative encoding: (q_i + u) k_j + (q_i + v) W_R r_{j-i} on the attention logits, "
               "learned u, v, W_R, sinusoids r of the distance (Dai et al. 2019, as Ruoss et al. 2023)"));
}

}  // namespace relpos::nn
