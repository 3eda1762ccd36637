// `shaw`: relative position representations (Shaw, Uszkoreit & Vaswani 2018).
//
//   e_ij = q_i (k_j + a^K_ij)ᵀ / sqrt(d)                 (eq. 4)
//   z_i  = sum_j a_ij (v_j + a^V_ij)                      (eq. 3)
//   a^K_ij = w^K[clip(j - i, k)],  a^V_ij = w^V[clip(j - i, k)],  clip(x, k) = max(-k, min(k, x))
//
// One (2k+1, d) table pair per attention layer, shared across heads (the paper and tensor2tensor)
// or per head; `keys` / `values` switch the a^K / a^V terms (Table 3); `tie` uses one table for both
// (OpenNMT-py's variant). Used in encoder and decoder self-attention; encoder-decoder attention only
// with cross_attention: true (no public implementation offers it). The terms are computed through
// the bucketed kernels rel_logits / rel_values: never an (L, L, d) tensor.
#include <fmt/format.h>

#include "nn/position.hpp"

namespace relpos::nn {

namespace {
struct ShawOptions {
    std::size_t k;
    bool keys, values, tie, per_head, cross;
};
}  // namespace

template <class T>
class ShawAttention : public AttentionPosition<T> {
public:
    ShawAttention(const ShawOptions& o, const AttentionSite& s, Rng& rng) : o_(o) {
        const std::size_t R = 2 * o.k + 1, d = s.head_dim;
        const Shape shape = o.per_head ? Shape{s.heads, R, d} : Shape{R, d};
        // Xavier uniform over a (2k+1, d) table, as tensor2tensor's default initialiser.
        if (o.keys) rel_k = this->register_parameter("rel_k", xavier_uniform<T>(shape, R, d, rng));
        if (o.values) {
            if (o.tie)
                rel_v = rel_k;  // one table for both terms
            else
                rel_v = this->register_parameter("rel_v", xavier_uniform<T>(shape, R, d, rng));
        }
    }
    Var<T> logit_bias(const Var<T>& q, std::size_t lk, std::size_t q_offset) override {
        if (!o_.keys) return {};
        return rel_logits(q, rel_k, o_.k, lk, q_offset);  // (B, H, Lq, Lk)
    }
    Var<T> add_logit_bias(const Var<T>& logits, const Var<T>& q, std::size_t q_offset) override {
        if (!o_.keys) return logits;
        return add_rel_logits(logits, q, rel_k, o_.k, q_offset);  // fused: no (B, H, Lq, Lk) temporary
    }
    Var<T> output_term(const Var<T>& attn, std::size_t q_offset) override {
        if (!o_.values) return {};
        return rel_values(attn, rel_v, o_.k, q_offset);  // (B, H, Lq, d)
    }

    Var<T> rel_k, rel_v;  // (2k+1, d) or (H, 2k+1, d)

private:
    ShawOptions o_;
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
        if (o_.tie && !(o_.keys && o_.values))
            opt.fail("tie", "needs both keys: true and values: true (it shares one table between the two terms)");
    }
    std::shared_ptr<AttentionPosition<T>> for_attention(const AttentionSite& site, Rng& rng) override {
        if (site.kind == AttentionSite::Cross && !o_.cross) return nullptr;
        if (!o_.keys && !o_.values) return nullptr;  // Table 3's "neither" row: no parameters at all
        return std::make_shared<ShawAttention<T>>(o_, site, rng);
    }

private:
    ShawOptions o_;
};

void register_shaw(PositionRegistry& r) {
    r.add(position_entry<ShawPosition>(
        "shaw", "relative position representations a^K / a^V clipped at distance k (Shaw et al. 2018)"));
}

}  // namespace relpos::nn
