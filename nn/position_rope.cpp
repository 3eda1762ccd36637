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
//
// Composed from existing differentiable ops, with no (L, L) or per-pair tensors:
//   f(x) = x ⊙ C + (x · R) ⊙ S
// C, S (L, d) hold cos(m θ_i), sin(m θ_i) at both 2i and 2i+1; R (d, d) is the constant signed pair
// swap, (x·R)_2i = -x_2i+1 and (x·R)_2i+1 = x_2i. Cost per rotated tensor (B, H, L, d): one
// (B·H·L, d) x (d, d) gemm, two broadcast multiplies and an add, each with its backward; L·d/2
// sin/cos evaluations for the tables, shared by q and k when they sit at the same positions.
#include <cmath>

#include <fmt/format.h>

#include "nn/position.hpp"

namespace relpos::nn {

template <class T>
class RopeAttention : public AttentionPosition<T> {
public:
    RopeAttention(double base, std::size_t head_dim, std::shared_ptr<const PositionMap> map)
        : d_(head_dim), map_(std::move(map)) {
        if (d_ % 2 != 0)
            throw std::invalid_argument(fmt::format("rope: head dimension {} is odd; it rotates pairs of coordinates", d_));
        for (std::size_t i = 0; i < d_; i += 2) theta_.push_back(std::pow(base, -double(i) / double(d_)));
        Array<T> r = zeros<T>({d_, d_});  // (d, d)
        for (std::size_t i = 0; i < d_; i += 2) {
            r(i + 1, i) = T(-1);  // (x·R)_2i   = -x_2i+1
            r(i, i + 1) = T(1);   // (x·R)_2i+1 =  x_2i
        }
        swap_ = Var<T>(std::move(r));
    }

    void queries_keys(Var<T>& q, Var<T>& k, std::size_t q_offset, std::size_t k_offset) override {
        const std::size_t lq = q.dim(2);
        const Tables tq = tables(q_offset, lq);
        q = rotate(q, tq);
        if (!k.defined()) return;  // encoder-decoder attention reusing cached (already rotated) memory keys
        const std::size_t lk = k.dim(2);
        k = rotate(k, (k_offset == q_offset && lk == lq) ? tq : tables(k_offset, lk));
    }

private:
    struct Tables {
        Var<T> cos, sin;  // (L, d) constants
    };
    // cos(m θ_i), sin(m θ_i) for positions m = offset .. offset + L - 1, each repeated at 2i and 2i+1.
    Tables tables(std::size_t offset, std::size_t L) const {
        Array<T> c = uninit<T>({L, d_}), s = uninit<T>({L, d_});
        for (std::size_t p = 0; p < L; ++p)
            for (std::size_t i = 0; i < d_; i += 2) {
                const double angle = double(mapped(map_, offset + p)) * theta_[i / 2];  // m θ_i
                c(p, i) = c(p, i + 1) = T(std::cos(angle));
                s(p, i) = s(p, i + 1) = T(std::sin(angle));
            }
        return {Var<T>(std::move(c)), Var<T>(std::move(s))};
    }
    // x (B, H, L, d) -> f(x) (B, H, L, d)
    Var<T> rotate(const Var<T>& x, const Tables& t) const { return x * t.cos + matmul(x, swap_) * t.sin; }

    std::size_t d_;
    std::vector<double> theta_;  // θ_i = base^(-2i/d), i = 0 .. d/2 - 1
    Var<T> swap_;                // R (d, d), a constant
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
