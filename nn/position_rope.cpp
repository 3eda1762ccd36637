// `rope`: rotary position embedding (Su et al. 2021, RoFormer, eq. 34). Each pair of query/key
// coordinates (x_2i, x_2i+1) at position m is rotated by the angle m θ_i:
//
//   f(x, m)_2i   = x_2i cos(m θ_i) - x_2i+1 sin(m θ_i)
//   f(x, m)_2i+1 = x_2i sin(m θ_i) + x_2i+1 cos(m θ_i),     θ_i = base^(-2i/d),  i = 0 .. d/2 - 1
//
// so that f(q, m)·f(k, n) depends on the positions only through n - m (eq. 16). Hook 2: queries at
// q_offset + i, keys at k_offset + j; keys are rotated once, as they enter the incremental-decoding
// cache, so decoding step by step gives the same logits as decoding the whole prefix. No parameters.
// Encoder and decoder self-attention; encoder-decoder attention only with cross_attention: true (it
// then rotates target queries and source keys by their own positions, which the paper does not do).
// The rotation itself is nn/rotary.hpp, shared with `xpos`.
#include <fmt/format.h>

#include "nn/position.hpp"
#include "nn/rotary.hpp"

namespace relpos::nn {

template <class T>
class RopeAttention : public AttentionPosition<T> {
public:
    RopeAttention(double base, std::size_t head_dim, std::shared_ptr<const PositionMap> map)
        : rot_(base, head_dim, "rope"), map_(std::move(map)) {}

    void queries_keys(Var<T>& q, Var<T>& k, std::size_t q_offset, std::size_t k_offset) override {
        const std::size_t lq = q.dim(2);
        const auto tq = rot_.tables(q_offset, lq, map_);
        q = rot_.rotate(q, tq);
        if (!k.defined()) return;  // encoder-decoder attention reusing cached (already rotated) memory keys
        const std::size_t lk = k.dim(2);
        // q and k at the same positions share the tables
        k = rot_.rotate(k, (k_offset == q_offset && lk == lq) ? tq : rot_.tables(k_offset, lk, map_));
    }

private:
    Rotary<T> rot_;
    std::shared_ptr<const PositionMap> map_;
};

template <class T>
class RopePosition : public PositionEncoding<T> {
public:
    RopePosition(Options& o, const PositionContext& c)
        : base_(o.get_double("base", 10000.0, 2.0, 1e9)), cross_(o.get_bool("cross_attention", false)) {
        if (c.heads > 0 && c.d_model % c.heads == 0 && (c.d_model / c.heads) % 2 != 0)
            o.fail("type", fmt::format("rope rotates pairs of coordinates, so the head dimension d_model / heads = "
                                       "{} / {} = {} must be even",
                                       c.d_model, c.heads, c.d_model / c.heads));
    }
    std::shared_ptr<AttentionPosition<T>> for_attention(const AttentionSite& site, Rng&) override {
        if (site.kind == AttentionSite::Cross && !cross_) return nullptr;
        return std::make_shared<RopeAttention<T>>(base_, site.head_dim, this->position_map_handle(site));
    }

private:
    double base_;
    bool cross_;
};

void register_rope(PositionRegistry& r) {
    r.add(position_entry<RopePosition>(
        "rope", "rotary embeddings: queries and keys rotated by position-dependent angles (Su et al. 2021)"));
}

}  // namespace relpos::nn
