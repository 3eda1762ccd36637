// `shaw`: relative position representations (Shaw, Uszkoreit & Vaswani 2018).
//
//   e_ij = q_i (k_j + a^K_ij)ᵀ / sqrt(d)                 (eq. 4)
//   z_i  = sum_j a_ij (v_j + a^V_ij)                      (eq. 3)
//   a^K_ij = w^K[clip(j - i, k)],  a^V_ij = w^V[clip(j - i, k)],  clip(x, k) = max(-k, min(k, x))
//
// One (2k+1, d) table pair per attention layer, shared across heads (the paper and tensor2tensor)
// or per head; `keys` / `values` switch the a^K / a^V terms (Table 3); `tie` uses one table for both
// (OpenNMT-py's variant); `init_rows` computes the tables' Xavier bound as if they had that many rows
// (0: their own 2k+1), which separates a larger k from the smaller initial scale it brings. Used in
// encoder and decoder self-attention; encoder-decoder attention only with cross_attention: true (no
// public implementation offers it). The terms are computed through the bucketed kernels rel_logits /
// rel_values: never an (L, L, d) tensor.
#include <algorithm>

#include <fmt/format.h>

#include "nn/position.hpp"

namespace relpos::nn {

namespace {
struct ShawOptions {
    std::size_t k, init_rows;
    bool keys, values, tie, per_head, cross;
};
}  // namespace

template <class T>
class ShawAttention : public AttentionPosition<T> {
public:
    ShawAttention(const ShawOptions& o, const AttentionSite& s, Rng& rng, std::shared_ptr<const PositionMap> map)
        : o_(o), heads_(s.heads), map_(std::move(map)) {
        const std::size_t R = 2 * o.k + 1, d = s.head_dim;
        const Shape shape = o.per_head ? Shape{s.heads, R, d} : Shape{R, d};
        // Xavier uniform over a (2k+1, d) table, as tensor2tensor's default initialiser: the bound
        // sqrt(6 / (2k+1 + d)) falls with k (0.30 at k = 16, 0.10 at k = 256 for d = 32) unless
        // init_rows fixes the row count it is computed from. The draws are the same either way.
        const std::size_t fan = o.init_rows ? o.init_rows : R;
        if (o.keys) rel_k = this->register_parameter("rel_k", xavier_uniform<T>(shape, fan, d, rng));
        if (o.values) {
            if (o.tie)
                rel_v = rel_k;  // one table for both terms
            else
                rel_v = this->register_parameter("rel_v", xavier_uniform<T>(shape, fan, d, rng));
        }
    }
    Var<T> logit_bias(const Var<T>& q, std::size_t lk, std::size_t q_offset) override {
        if (!o_.keys) return {};
        if (!is_identity(map_)) return mapped_logits(q, lk, q_offset);
        return rel_logits(q, rel_k, o_.k, lk, q_offset);  // (B, H, Lq, Lk)
    }
    Var<T> add_logit_bias(const Var<T>& logits, const Var<T>& q, std::size_t q_offset) override {
        if (!o_.keys) return logits;
        if (!is_identity(map_)) return logits + mapped_logits(q, logits.dim(3), q_offset);
        return add_rel_logits(logits, q, rel_k, o_.k, q_offset);  // fused: no (B, H, Lq, Lk) temporary
    }
    Var<T> output_term(const Var<T>& attn, std::size_t q_offset) override {
        if (!o_.values) return {};
        if (!is_identity(map_)) {  // z_i += sum_j a_ij a^V_ij, one (Lq, Lk) x (Lk, d) product per head and query
            const std::size_t B = attn.dim(0), H = attn.dim(1), lq = attn.dim(2), lk = attn.dim(3);
            const Var<T> E = gathered(rel_v, lq, lk, q_offset);  // (H*Lq, Lk, d)
            const Var<T> a = permute_view(attn, attn.shape(), {1, 2, 0, 3}, {H * lq, B, lk});
            const std::size_t d = E.dim(2);
            return permute_view(matmul(a, E), {H, lq, B, d}, {2, 0, 1, 3});
        }
        return rel_values(attn, rel_v, o_.k, q_offset);  // (B, H, Lq, d)
    }

    Var<T> rel_k, rel_v;  // (2k+1, d) or (H, 2k+1, d)

private:
    // Randomized positions (a non-identity map): distances at(j) - at(i) are no longer a Toeplitz pattern,
    // so the bucketed kernels do not apply. The table rows of every (head, query, key) are gathered
    // instead, (H*Lq, Lk, d): the O(L^2 d) tensor the kernels avoid, affordable at the short lengths
    // randomized training uses.
    Var<T> gathered(const Var<T>& table, std::size_t lq, std::size_t lk, std::size_t q_offset) const {
        const std::size_t R = 2 * o_.k + 1, d = table.dim(table.ndim() - 1), H = heads_;
        Var<T> t3 = table;
        if (table.ndim() == 2) {  // shared across heads: the same rows for every head
            std::vector<Var<T>> copies(H, reshape(table, {1, R, d}));
            t3 = H == 1 ? copies[0] : concat(copies, 0);
        }
        std::vector<std::int32_t> ids(H * lq * lk);
        for (std::size_t h = 0; h < H; ++h)
            for (std::size_t i = 0; i < lq; ++i) {
                const long qi = long(mapped(map_, q_offset + i));
                for (std::size_t j = 0; j < lk; ++j) {
                    const long rel = std::max(-long(o_.k), std::min(long(o_.k), long(mapped(map_, j)) - qi));
                    ids[(h * lq + i) * lk + j] = std::int32_t(h * R + std::size_t(rel + long(o_.k)));
                }
            }
        return embedding(reshape(t3, {H * R, d}), ids, {H * lq, lk});
    }
    // (B, H, Lq, Lk): q_i · a^K_ij, one (B, d) x (d, Lk) product per head and query
    Var<T> mapped_logits(const Var<T>& q, std::size_t lk, std::size_t q_offset) const {
        const std::size_t B = q.dim(0), H = q.dim(1), lq = q.dim(2), d = q.dim(3);
        const Var<T> E = gathered(rel_k, lq, lk, q_offset);
        const Var<T> qr = permute_view(q, q.shape(), {1, 2, 0, 3}, {H * lq, B, d});
        return permute_view(matmul(qr, E, false, true), {H, lq, B, lk}, {2, 0, 1, 3});
    }

    ShawOptions o_;
    std::size_t heads_;
    std::shared_ptr<const PositionMap> map_;
};

template <class T>
class ShawPosition : public PositionEncoding<T> {
public:
    ShawPosition(Options& opt, const PositionContext&) {
        o_.k = static_cast<std::size_t>(opt.get_int("k", 16, 0, 1 << 20));
        o_.keys = opt.get_bool("keys", true);
        o_.values = opt.get_bool("values", true);
        o_.tie = opt.get_bool("tie", false);
        o_.per_head = opt.get_bool("per_head", false);
        o_.cross = opt.get_bool("cross_attention", false);
        o_.init_rows = static_cast<std::size_t>(opt.get_int("init_rows", 0, 0, 1 << 21));
        opt.omit_from_run_name_at("init_rows", "0");  // came 2026-11-26, after runs were finished
        if (o_.tie && !(o_.keys && o_.values))
            opt.fail("tie", "needs both keys: true and values: true (it shares one table between the two terms)");
    }
    std::shared_ptr<AttentionPosition<T>> for_attention(const AttentionSite& site, Rng& rng) override {
        if (site.kind == AttentionSite::Cross && !o_.cross) return nullptr;
        if (!o_.keys && !o_.values) return nullptr;  // Table 3's "neither" row: no parameters at all
        return std::make_shared<ShawAttention<T>>(o_, site, rng, this->position_map_handle(site));
    }
    // Table 3's "neither" row: for_attention hands out no hook, so no table, no draw (checked against
    // {type: none}: 60 updates of the tables' model, every parameter array cmp-equal).
    bool adds_nothing() const override { return !o_.keys && !o_.values; }

private:
    ShawOptions o_;
};

void register_shaw(PositionRegistry& r) {
    r.add(position_entry<ShawPosition>(
        "shaw", "relative position representations a^K / a^V clipped at distance k (Shaw et al. 2018)"));
}

}  // namespace relpos::nn
