// `fire`: Functional Interpolation for Relative Positions (Li et al. 2023, "Functional Interpolation for
// Relative Positions Improves Long Context Transformers", eq. 3-5). No position embeddings; a small MLP
// of the progressively interpolated log distance is added to the attention logits (hook 3):
//
//   b(i, j) = f_θ( ψ(i - j) / ψ(max(L, i)) ),    ψ(x) = log(c x + 1),    i >= j (causal)
//
// f_θ: 1 -> hidden (32) -> H, ReLU, as the paper; c > 0 and the threshold L > 0 learned. Dividing by
// ψ(i) maps every query's distances into [0, 1] whatever the context length ("progressive
// interpolation"), which is what lets FIRE extrapolate; the threshold L keeps short contexts (i < L) from
// being stretched over [0, 1]. Positions are 0-based and absolute (query q_offset + i, key j), so an
// incremental-decoding step gets the row of the full bias.
//
// Bidirectional encoder self-attention (the paper is decoder-only): keys after the query get the mirrored
// input with a minus sign, sign(i - j) ψ(|i - j|) / ψ(max(L, i)), so that f_θ can tell left from right
// (with |i - j| alone the keys d to the left and d to the right of a query would get the same bias). The
// normaliser stays the query position i, not the sequence length: a padded batch must not change a
// sentence's encoding. Inputs for keys to the right of i can exceed 1 in magnitude (up to
// ψ(n - 1 - i) / ψ(max(L, i))), so interpolation is one-sided there. In the decoder the
// same formula gives -ψ(j - i) / ψ(max(L, i)) for the future keys, which are masked anyway.
// Encoder-decoder attention is refused: a target position minus a source position is no distance, and
// the normaliser ψ(query position) says nothing about the source.
//
// Parameters (PyTorch's names in the paper's listing in brackets): log_c (1,) [c], log_L (1,)
// [L_multiplier · init_L], fc1.weight (1, hidden), fc1.bias (hidden,), fc2.weight (hidden, H), fc2.bias (H,)
// [mlp]. Shared by all self-attention layers of a side by default (encoder.position.fc1.weight, ...), as
// T5's bias here: one small function per side, its gradients summed over layers; per_layer: true gives
// each layer its own (<layer>.self_attn.fire.fc1.weight, ...). Each layer evaluates f_θ itself (hooks
// keep no caches): (Lq·Lk·hidden) work per layer, small next to q·kᵀ at the model sizes used here.
// Positivity: c = exp(log_c), L = exp(log_L) instead of the listing's |c| and |L_multiplier| · init_L:
// smooth and strictly positive (the absolute value has a kink at 0, where ψ ≡ 0 and the bias stops
// depending on position), and since L > 0 the normaliser is at least log(1 + c L) > 0, so the listing's
// eps is not needed. With Adam, log_L moves as the listing's multiplier does (relative steps in L).
// learn_L: false (default true, the paper's) holds L at L_init: the ablation of a threshold training cannot move
// (trained at 64 tokens from L_init = 16, L ends near 58 in results/lm_converged, so the interpolation acts
// on few training queries).
// Init: c = c_init (0.1), L = L_init (512), as the listing; the MLP as torch.nn.Linear, U(±1/sqrt(fan_in))
// for weights and biases (zero biases would put every ReLU's kink at input 0, making f_θ piecewise
// linear with a single knot at the start).
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "nn/position.hpp"

namespace relpos::nn {

namespace {
struct FireOptions {
    std::size_t hidden;
    double c_init, L_init;
    bool per_layer, learn_L;
};

template <class T>
Array<T> torch_linear_init(const Shape& s, std::size_t fan_in, Rng& rng) {
    const double a = 1.0 / std::sqrt(double(fan_in));
    Array<T> w = uninit<T>(s);
    for (auto& v : w) v = T(rng.uniform(-a, a));
    return w;
}
}  // namespace

// c, L and f_θ: one per side (shared) or one per layer.
template <class T>
class FireFunction : public Module<T> {
public:
    FireFunction(const FireOptions& o, std::size_t heads, Rng& rng) {
        log_c = this->register_parameter("log_c", full<T>({1}, T(std::log(o.c_init))));
        // learn_L: false keeps L at L_init, a constant (no parameter): the interpolation then acts from query
        // L_init on in training as at test, whatever training would have moved L to
        log_L = o.learn_L ? this->register_parameter("log_L", full<T>({1}, T(std::log(o.L_init))))
                          : Var<T>(full<T>({1}, T(std::log(o.L_init))));
        w1 = this->register_parameter("fc1.weight", torch_linear_init<T>({1, o.hidden}, 1, rng));
        b1 = this->register_parameter("fc1.bias", torch_linear_init<T>({o.hidden}, 1, rng));
        w2 = this->register_parameter("fc2.weight", torch_linear_init<T>({o.hidden, heads}, o.hidden, rng));
        b2 = this->register_parameter("fc2.bias", torch_linear_init<T>({heads}, o.hidden, rng));
    }

    // Queries at absolute positions q_offset .. q_offset + lq - 1, keys 0 .. lk - 1 -> (H, Lq, Lk)
    Var<T> bias(std::size_t lq, std::size_t lk, std::size_t q_offset, const std::shared_ptr<const PositionMap>& map = nullptr) const {
        Array<T> dist = uninit<T>({lq, lk}), sign = uninit<T>({lq, lk});  // |i - j|, sign(i - j)
        Array<T> pos = uninit<T>({lq, 1});                                 // i
        for (std::size_t i = 0; i < lq; ++i) {
            const std::size_t qi = mapped(map, q_offset + i);
            pos(i, 0) = T(qi);
            for (std::size_t j0 = 0; j0 < lk; ++j0) {
                const std::size_t j = mapped(map, j0), col = j0;
                dist(i, col) = T(qi > j ? qi - j : j - qi);
                sign(i, col) = qi > j ? T(1) : qi < j ? T(-1) : T(0);
            }
        }
        const Var<T> c = exp(log_c), L = exp(log_L);  // (1,)
        const Var<T> p(std::move(pos));
        const Var<T> num = log(c * Var<T>(std::move(dist)) + T(1));  // ψ(|i - j|)          (Lq, Lk)
        const Var<T> den = log(c * (p + relu(L - p)) + T(1));        // ψ(max(L, i))         (Lq, 1)
        const Var<T> x = Var<T>(std::move(sign)) * num / den;        // the MLP's input      (Lq, Lk)
        const Var<T> h = relu(linear(reshape(x, {lq, lk, 1}), w1, b1));  //                  (Lq, Lk, hidden)
        return permute(linear(h, w2, b2), {2, 0, 1});                    // f_θ              (H, Lq, Lk)
    }

    Var<T> log_c, log_L;  // (1,) each; log_L a constant with learn_L: false
    Var<T> w1, b1, w2, b2;  // (1, hidden), (hidden,), (hidden, H), (H,)
};

template <class T>
class FireAttention : public AttentionPosition<T> {
public:
    bool bias_only() const override { return true; }
    // fn: the side's shared function, or nullptr for one of this layer's own.
    FireAttention(const FireOptions& o, const AttentionSite& s, std::shared_ptr<FireFunction<T>> fn, Rng& rng,
                  std::shared_ptr<const PositionMap> map)
        : fn_(fn ? std::move(fn) : this->register_module("fire", std::make_shared<FireFunction<T>>(o, s.heads, rng))),
          map_(std::move(map)) {
        if (fn_->w2.dim(1) != s.heads)
            throw std::invalid_argument(fmt::format("fire: MLP has {} outputs, attention has {} heads", fn_->w2.dim(1), s.heads));
    }
    Var<T> logit_bias(const Var<T>& q, std::size_t lk, std::size_t q_offset) override {
        return fn_->bias(q.dim(2), lk, q_offset, map_);
    }

private:
    std::shared_ptr<FireFunction<T>> fn_;
    std::shared_ptr<const PositionMap> map_;
};

template <class T>
class FirePosition : public PositionEncoding<T> {
public:
    FirePosition(Options& opt, const PositionContext& c) {
        o_.hidden = std::size_t(opt.get_int("hidden", 32, 1, 4096));
        o_.c_init = opt.get_double("c_init", 0.1, 1e-6, 1e6);
        o_.L_init = opt.get_double("L_init", 512.0, 1e-3, 1e9);
        o_.per_layer = opt.get_bool("per_layer", false);
        o_.learn_L = opt.get_bool("learn_L", true);
        opt.omit_from_run_name_at("learn_L", "true");  // came 2026-11-28, after runs were finished
        // Not listed by `relpos list` (has() is false there), but a clear refusal instead of "unknown key".
        if (opt.has("cross_attention") && opt.get_bool("cross_attention", false))
            opt.fail("cross_attention", "fire acts in self-attention only: in encoder-decoder attention a target "
                                        "position minus a source position is no distance; use false or drop the key");
        if (!o_.per_layer) shared_ = this->register_module("", std::make_shared<FireFunction<T>>(o_, c.heads, *c.init_rng));
    }
    std::shared_ptr<AttentionPosition<T>> for_attention(const AttentionSite& site, Rng& rng) override {
        if (site.kind == AttentionSite::Cross) return nullptr;
        return std::make_shared<FireAttention<T>>(o_, site, shared_, rng, this->position_map_handle(site));
    }

private:
    FireOptions o_;
    std::shared_ptr<FireFunction<T>> shared_;  // nullptr with per_layer
};

void register_fire(PositionRegistry& r) {
    r.add(position_entry<FirePosition>(
        "fire", "learned MLP of the progressively interpolated log distance, f(psi(i - j) / psi(max(L, i))), on the "
                "attention logits (FIRE, Li et al. 2023)"));
}

}  // namespace relpos::nn
