// `alibi`: attention with linear biases (Press, Smith & Lewis 2022). No position embeddings and no
// parameters: each head h adds a penalty proportional to the query-key distance to its logits,
//
//   softmax(q_i Kᵀ + m_h · [-(i - 1), ..., -2, -1, 0])        (sec. 3, causal)
//
// i.e. bias_hij = -m_h (i - j) for keys j <= i. In the causal decoder the future keys are masked, so
// their bias is left at 0. Attention that sees both sides (an encoder, encoder-only models) needs a
// form the paper does not give; option `bidirectional`:
//   offset     -m_h |i - j| + 0.5 m_h [j < i]: the form of Ruoss et al. 2023's reference code, which adds
//              0.5 to the lower triangle "to break the symmetry (otherwise, the model cannot distinguish
//              left and right)". The default.
//   symmetric  -m_h |i - j|: a key at distance d to the left and one at d to the right get the same bias.
//              What relpos computed before the option existed (2026-11-26); kept for comparison.
// Queries sit at positions q_offset + i and keys at j (both through the randomized-position map), so an
// incremental-decoding step gets the row of the full bias. With `randomized_form: distances` the distance of
// a key at offset t is the batch's drawn distance for |t| (PositionMap::distance), as Ruoss et al.'s noisy ALiBi.
// The slopes m_h are the paper's geometric sequence (alibi_slopes below). Self-attention only; with
// cross_attention: true also encoder-decoder attention, with the bidirectional form (not in the paper).
#include <cmath>
#include <vector>

#include "nn/position.hpp"

namespace relpos::nn {

namespace {
// The reference code's get_slopes: for n a power of two, m_h = 2^(-8h/n), h = 1..n ("for 8 heads
// 1/2, 1/4, ..., 1/256"); otherwise the slopes of the closest lower power of two p, followed by every
// other slope of 2p (the first n - p of m_1, m_3, m_5, ...).
std::vector<double> alibi_slopes(std::size_t n) {
    std::size_t p = 1;
    while (2 * p <= n) p *= 2;
    std::vector<double> s;
    for (std::size_t h = 1; h <= p; ++h) s.push_back(std::pow(2.0, -8.0 * double(h) / double(p)));
    if (p == n) return s;
    const std::vector<double> twice = alibi_slopes(2 * p);
    for (std::size_t i = 0; s.size() < n; i += 2) s.push_back(twice[i]);
    return s;
}
}  // namespace

template <class T>
class AlibiAttention : public AttentionPosition<T> {
public:
    bool bias_only() const override { return true; }
    AlibiAttention(std::size_t heads, bool causal, bool offset, std::shared_ptr<const PositionMap> map)
        : slopes_(alibi_slopes(heads)), causal_(causal), offset_(offset), map_(std::move(map)) {}

    // -> (1, H, Lq, Lk), a constant
    Var<T> logit_bias(const Var<T>& q, std::size_t lk, std::size_t q_offset) override {
        const std::size_t H = slopes_.size(), lq = q.dim(2);
        // Each (query, key)'s distance once, then every head's slope times it.
        std::vector<long> key(lk);
        for (std::size_t j = 0; j < lk; ++j) key[j] = long(mapped(map_, j));  // absolute key positions
        std::vector<double> dist(lq * lk);
        for (std::size_t i = 0; i < lq; ++i) {
            const long qi = long(mapped(map_, q_offset + i));  // absolute query position
            for (std::size_t j = 0; j < lk; ++j) {
                const long t = key[j] - qi;                                     // the key's offset
                const double a = std::abs(double(relabelled(map_, t)));  // |t|, or its drawn distance
                // causal: the future is masked (bias 0 there); bidirectional offset: keys on the left get +0.5
                dist[i * lk + j] = causal_ ? (t > 0 ? 0.0 : a) : a - (offset_ && t < 0 ? 0.5 : 0.0);
            }
        }
        Array<T> b = uninit<T>({1, H, lq, lk});
        T* pb = b.data();
        for (std::size_t h = 0; h < H; ++h) {
            const double m = -slopes_[h];
            for (std::size_t x = 0; x < lq * lk; ++x) *pb++ = T(m * dist[x]);
        }
        return Var<T>(std::move(b));
    }

private:
    std::vector<double> slopes_;  // m_h, one per head
    bool causal_, offset_;
    std::shared_ptr<const PositionMap> map_;
};

template <class T>
class AlibiPosition : public PositionEncoding<T> {
public:
    bool supports_random_distances() const override { return true; }
    AlibiPosition(Options& o, const PositionContext&)
        : cross_(o.get_bool("cross_attention", false)),
          offset_(o.get_string("bidirectional", "offset", {"offset", "symmetric"}) == "offset") {
        // the option came 2026-11-26; the runs before it computed symmetric, and keep their names
        o.omit_from_run_name_at("bidirectional", "symmetric");
    }
    std::shared_ptr<AttentionPosition<T>> for_attention(const AttentionSite& site, Rng&) override {
        if (site.kind == AttentionSite::Cross && !cross_) return nullptr;
        return std::make_shared<AlibiAttention<T>>(site.heads, site.causal(), offset_, this->position_map_handle(site));
    }

private:
    bool cross_, offset_;
};

void register_alibi(PositionRegistry& r) {
    r.add(position_entry<AlibiPosition>(
        "alibi", "linear distance penalties -m_h |i - j| on the attention logits, no embeddings (Press et al. 2022)"));
}

}  // namespace relpos::nn
