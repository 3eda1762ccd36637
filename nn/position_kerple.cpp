// `kerple`: KERPLE-log (Chi, Fan, Ramadge & Rudnicky 2022, "KERPLE: Kernelized Relative Positional
// Embedding for Length Extrapolation", sec. 4, the logarithmic variant). No position embeddings; each
// head h of each self-attention layer adds a learned, conditionally positive definite kernel of the
// distance to its logits (hook 3):
//
//   b_h(i, j) = -r1_h · log(1 + r2_h · |i - j|),      r1_h, r2_h > 0
//
// ALiBi is the special case of a straight line (-m_h |i - j|); the logarithm lets a head look further
// than a linear penalty allows. In the causal decoder future keys are masked, so their bias is left at
// 0 (as alibi does); in the bidirectional encoder it is the formula with |i - j|. Queries sit at
// absolute positions q_offset + i and keys at j, so an incremental-decoding step gets the row of the full
// bias. cross_attention: true also biases encoder-decoder attention with |i - j| between target and
// source positions (not in the paper; as alibi's option), with parameters of its own.
//
// Parameters: per layer and per head, as the paper's code (each attention layer owns its bias_p, bias_a):
// <layer>.self_attn.kerple_log_r1 and kerple_log_r2, shape (H,), holding log r1 and log r2.
// Positivity through r = exp(log_r) rather than the reference code's in-place clamp to >= 0.01 after
// every optimiser step: relpos's plug-in interface has no post-step hook, and a clamp inside the forward
// (max(r, 0.01)) has zero gradient below the bound, so a value that crosses it stays there for good; exp
// is smooth (gradient-checkable) and strictly positive, and with Adam it makes relative steps in r, which
// suits r2, whose useful range (nearly linear for small r2, nearly logarithmic for large) spans orders of
// magnitude. No new op is needed (softplus would need one: log(1 + exp(x)) overflows in float).
// Init as the reference code: per head r1 ~ U(0, 2), r2 ~ U(0, 1), raised to at least 0.01 (init: uniform,
// with r1_init / r2_init as the upper bounds), or every head at r1_init, r2_init (init: constant).
#include <algorithm>
#include <cmath>

#include "nn/position.hpp"

namespace relpos::nn {

namespace {
struct KerpleOptions {
    double r1_init, r2_init;
    bool uniform;
};

// (H,) values of log r: U(0, hi) raised to 0.01 per head (the reference code's rand() * scale, clamped), or hi.
template <class T>
Array<T> kerple_init(std::size_t heads, double hi, bool uniform, Rng& rng) {
    Array<T> a = uninit<T>({heads});
    for (std::size_t h = 0; h < heads; ++h) a(h) = T(std::log(uniform ? std::max(rng.uniform(0.0, hi), 0.01) : hi));
    return a;
}
}  // namespace

template <class T>
class KerpleAttention : public AttentionPosition<T> {
public:
    bool bias_only() const override { return true; }
    KerpleAttention(const KerpleOptions& o, const AttentionSite& s, Rng& rng, std::shared_ptr<const PositionMap> map)
        : causal_(s.causal()), map_(std::move(map)) {
        log_r1 = this->register_parameter("kerple_log_r1", kerple_init<T>(s.heads, o.r1_init, o.uniform, rng));
        log_r2 = this->register_parameter("kerple_log_r2", kerple_init<T>(s.heads, o.r2_init, o.uniform, rng));
    }

    // -> (H, Lq, Lk), broadcast over the batch
    Var<T> logit_bias(const Var<T>& q, std::size_t lk, std::size_t q_offset) override {
        const std::size_t H = log_r1.dim(0), lq = q.dim(2);
        Array<T> dist = uninit<T>({lq, lk});  // |i - j|, 0 for (masked) future keys in the decoder
        for (std::size_t i = 0; i < lq; ++i)
            for (std::size_t j = 0; j < lk; ++j) {
                const std::size_t qi = mapped(map_, q_offset + i), kj = mapped(map_, j);  // absolute positions
                dist(i, j) = causal_ && kj > qi ? T(0) : T(qi > kj ? qi - kj : kj - qi);
            }
        const Var<T> r1 = exp(reshape(log_r1, {H, 1, 1})), r2 = exp(reshape(log_r2, {H, 1, 1}));
        // b_h(i, j) = -r1_h log(1 + r2_h |i - j|)
        return -(r1 * log(r2 * Var<T>(std::move(dist)) + T(1)));
    }

    Var<T> log_r1, log_r2;  // (H,)

private:
    bool causal_;
    std::shared_ptr<const PositionMap> map_;
};

template <class T>
class KerplePosition : public PositionEncoding<T> {
public:
    KerplePosition(Options& opt, const PositionContext&) {
        o_.r1_init = opt.get_double("r1_init", 2.0, 1e-3, 1e3);
        o_.r2_init = opt.get_double("r2_init", 1.0, 1e-3, 1e3);
        o_.uniform = opt.get_string("init", "uniform", {"uniform", "constant"}) == "uniform";
        cross_ = opt.get_bool("cross_attention", false);
    }
    std::shared_ptr<AttentionPosition<T>> for_attention(const AttentionSite& site, Rng& rng) override {
        if (site.kind == AttentionSite::Cross && !cross_) return nullptr;
        return std::make_shared<KerpleAttention<T>>(o_, site, rng, this->position_map_handle(site));
    }

private:
    KerpleOptions o_;
    bool cross_;
};

void register_kerple(PositionRegistry& r) {
    r.add(position_entry<KerplePosition>(
        "kerple", "learned log-distance penalties -r1_h log(1 + r2_h |i - j|) on the attention logits (KERPLE-log, Chi et al. 2022)"));
}

}  // namespace relpos::nn
