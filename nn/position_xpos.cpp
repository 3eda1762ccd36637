// `xpos`: extrapolatable position embedding (Sun et al. 2022, "A Length-Extrapolatable Transformer",
// sec. 3.2): rotary embeddings whose rotation is scaled by an exponential decay per coordinate pair,
// up for queries and down for keys,
//
//   q̃_n = f(q, n) ⊙ ζ^(n/γ),    k̃_m = f(k, m) ⊙ ζ^(-m/γ),    ζ_i = (2i/d + 0.4) / 1.4,  i = 0 .. d/2 - 1
//
// with f the rotation of `rope` (nn/rotary.hpp) and γ = `scale_base` (512, as torchscale's XPOS and
// x-transformers' `xpos_scale_base`), so that q̃_n·k̃_m = Σ_i ζ_i^((n-m)/γ) (rotated q·k)_i: pairs with small ζ_i
// (the high frequencies) fade with the distance n - m. The scale is applied to q and its inverse to k, as
// both reference implementations do. They centre the positions (n - L/2) to keep ζ^(±n/γ) in range; the
// centre cancels in q̃·k̃, but it depends on the length, so a key cached at one step would no longer match a
// later step's query. relpos uses the absolute positions instead (keys are scaled once, as they enter the
// cache), and says how far that keeps the scales within 1e±30 (max_length(): 28,231 positions at γ = 512).
//
// The decay is defined for causal attention (x-transformers refuses xPos in bidirectional attention: there
// ζ^((n-m)/γ) grows for keys after the query). In encoder self-attention relpos rotates without the scale,
// i.e. as `rope`. Self-attention only; no parameters. Positions through the randomized-position map.
#include <cmath>

#include <fmt/format.h>

#include "nn/position.hpp"
#include "nn/rotary.hpp"

namespace relpos::nn {

namespace {
// rate_i = log(ζ_i) / γ, so that ζ_i^(±m/γ) = exp(±m rate_i); ζ_i = (2i + 0.4 d) / (1.4 d) as torchscale's buffer.
std::vector<double> xpos_rates(std::size_t d, double scale_base) {
    std::vector<double> r;
    for (std::size_t i = 0; i < d; i += 2) r.push_back(std::log((double(i) + 0.4 * double(d)) / (1.4 * double(d))) / scale_base);
    return r;
}
}  // namespace

template <class T>
class XposAttention : public AttentionPosition<T> {
public:
    bool bias_only() const override { return true; }
    XposAttention(double base, double scale_base, bool decay, std::size_t head_dim, std::shared_ptr<const PositionMap> map)
        : rot_(base, head_dim, "xpos"), map_(std::move(map)) {
        if (decay) rate_ = xpos_rates(head_dim, scale_base);
    }

    void queries_keys(Var<T>& q, Var<T>& k, std::size_t q_offset, std::size_t k_offset) override {
        const std::vector<double>* rate = rate_.empty() ? nullptr : &rate_;
        q = rot_.rotate(q, rot_.tables(q_offset, q.dim(2), map_, rate, +1.0));  // f(q, n) ζ^(n/γ)
        if (!k.defined()) return;
        k = rot_.rotate(k, rot_.tables(k_offset, k.dim(2), map_, rate, -1.0));  // f(k, m) ζ^(-m/γ)
    }

private:
    Rotary<T> rot_;
    std::vector<double> rate_;  // log(ζ_i)/γ; empty: no decay (bidirectional attention)
    std::shared_ptr<const PositionMap> map_;
};

template <class T>
class XposPosition : public PositionEncoding<T> {
public:
    XposPosition(Options& o, const PositionContext& c)
        : base_(o.get_double("base", 10000.0, 2.0, 1e9)), scale_base_(o.get_double("scale_base", 512.0, 1.0, 1e9)) {
        if (c.heads > 0 && c.d_model % c.heads == 0 && (c.d_model / c.heads) % 2 != 0)
            o.fail("type", fmt::format("xpos rotates pairs of coordinates, so the head dimension d_model / heads = "
                                       "{} / {} = {} must be even",
                                       c.d_model, c.heads, c.d_model / c.heads));
        // ζ_0^(-n/γ) <= 1e30 (the smallest ζ, 0.4/1.4, grows fastest): positions up to γ·log(1e30)/-log(ζ_0)
        if (c.side == Side::Decoder) max_len_ = std::size_t(scale_base_ * std::log(1e30) / -std::log(0.4 / 1.4));
    }
    std::shared_ptr<AttentionPosition<T>> for_attention(const AttentionSite& site, Rng&) override {
        if (site.kind == AttentionSite::Cross) return nullptr;
        return std::make_shared<XposAttention<T>>(base_, scale_base_, site.causal(), site.head_dim,
                                                  this->position_map_handle(site));
    }
    std::size_t max_length() const override { return max_len_; }

private:
    double base_, scale_base_;
    std::size_t max_len_ = static_cast<std::size_t>(-1);
};

void register_xpos(PositionRegistry& r) {
    r.add(position_entry<XposPosition>(
        "xpos", "rotary embeddings with a per-pair exponential decay of the distance, causal (Sun et al. 2022)"));
}

}  // namespace relpos::nn
