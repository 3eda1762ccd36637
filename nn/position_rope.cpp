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
//
// Scaling at evaluation (`scaling`, evaluation only: `relpos eval --run` may set it on a trained run), for an
// attention over L positions (its extent: the furthest query or key index + 1) longer than `scaling_length`
// (the training context), with s = L / scaling_length:
//   linear: position interpolation (Chen et al. 2023, "Extending Context Window of Large Language Models via
//           Positional Interpolation", eq. 3): every position m is read as m / s, so the angles stay within
//           those trained;
//   ntk:    "NTK-aware" scaling (bloc97 2023; the form in Peng et al. 2023, YaRN, section 3.1): the base becomes
//           base · s^(d/(d-2)), i.e. θ_i · s^(-2i/(d-2)): the highest frequency is kept, the lowest is
//           interpolated as linear does.
// At L <= scaling_length both are the plain rotation, bit for bit (so training at that length is unchanged).
// The factor follows each call's L (Hugging Face's "dynamic" forms): an evaluation at windows of 64 to 1,024
// tokens scales each window by its own length. Incremental decoding rotates a key once, as it enters the cache,
// with the factor of that step.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "nn/position.hpp"
#include "nn/rotary.hpp"

namespace relpos::nn {

enum class RopeScaling { None, Linear, Ntk };

template <class T>
class RopeAttention : public AttentionPosition<T> {
public:
    bool bias_only() const override { return true; }
    RopeAttention(double base, std::size_t head_dim, std::shared_ptr<const PositionMap> map, RopeScaling scaling,
                  std::size_t scaling_length)
        : rot_(base, head_dim, "rope"), map_(std::move(map)), scaling_(scaling), scaling_length_(scaling_length) {}

    void queries_keys(Var<T>& q, Var<T>& k, std::size_t q_offset, std::size_t k_offset) override {
        const std::size_t lq = q.dim(2), lk = k.defined() ? k.dim(2) : 0;
        const std::size_t extent = std::max(q_offset + lq, k.defined() ? k_offset + lk : 0);
        auto tables = [&](std::size_t offset, std::size_t L) {
            if (scaling_ == RopeScaling::None || extent <= scaling_length_) return rot_.tables(offset, L, map_);
            const double s = double(extent) / double(scaling_length_);
            if (scaling_ == RopeScaling::Linear) return rot_.tables_scaled(offset, L, map_, 1.0 / s, rot_.theta());
            std::vector<double> theta = rot_.theta();  // ntk: θ_i s^(-2i/(d-2)), i = 0 .. d/2 - 1
            const double d = double(rot_.head_dim());
            for (std::size_t i = 0; i < theta.size(); ++i) theta[i] *= std::pow(s, -2.0 * double(i) / (d - 2.0));
            return rot_.tables_scaled(offset, L, map_, 1.0, theta);
        };
        const auto tq = tables(q_offset, lq);
        q = rot_.rotate(q, tq);
        if (!k.defined()) return;  // encoder-decoder attention reusing cached (already rotated) memory keys
        // q and k at the same positions share the tables
        k = rot_.rotate(k, (k_offset == q_offset && lk == lq) ? tq : tables(k_offset, lk));
    }

private:
    Rotary<T> rot_;
    std::shared_ptr<const PositionMap> map_;
    RopeScaling scaling_;
    std::size_t scaling_length_;
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
        // came 2026-11-28 (84debca), after runs were finished; evaluation only (top of the file)
        const std::string scaling = o.get_string("scaling", "none", {"none", "linear", "ntk"});
        scaling_length_ = static_cast<std::size_t>(o.get_int("scaling_length", 0, 0, 1 << 30));
        o.omit_from_run_name_at("scaling", "none");
        o.omit_from_run_name_at("scaling_length", "0");
        o.evaluation_only("scaling");
        o.evaluation_only("scaling_length");
        scaling_ = scaling == "linear" ? RopeScaling::Linear : scaling == "ntk" ? RopeScaling::Ntk : RopeScaling::None;
        if (scaling_ != RopeScaling::None && scaling_length_ == 0)
            o.fail("scaling", fmt::format("{} scales positions past scaling_length, the length the model trained at: set "
                                          "scaling_length: N (N >= 1)", scaling));
        if (scaling_ == RopeScaling::Ntk && c.heads > 0 && c.d_model / c.heads == 2)
            o.fail("scaling", "ntk changes the base by s^(d/(d-2)), undefined for a head dimension of 2; use linear");
    }
    std::shared_ptr<AttentionPosition<T>> for_attention(const AttentionSite& site, Rng&) override {
        if (site.kind == AttentionSite::Cross && !cross_) return nullptr;
        return std::make_shared<RopeAttention<T>>(base_, site.head_dim, this->position_map_handle(site), scaling_,
                                                  scaling_length_);
    }

private:
    double base_;
    bool cross_;
    RopeScaling scaling_ = RopeScaling::None;
    std::size_t scaling_length_ = 0;
};

void register_rope(PositionRegistry& r) {
    r.add(position_entry<RopePosition>(
        "rope", "rotary embeddings: queries and keys rotated by position-dependent angles (Su et al. 2021)"));
}

}  // namespace relpos::nn
