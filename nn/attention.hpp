// Multi-head attention (self and encoder-decoder) with key-padding and causal masks, attention
// dropout, position-encoding hooks and an incremental-decoding key/value cache.
#pragma once

#include <memory>
#include <vector>

#include "nn/dropout.hpp"
#include "nn/linear.hpp"
#include "nn/position.hpp"

namespace relpos::nn {

// Masks, each either boolean (true = blocked, as PyTorch) or additive float (0 keeps, -inf blocks).
template <class T>
struct AttentionMask {
    Array<T> key_padding;  // (B, Lk) additive, when has_key_padding
    Array<T> attn;         // (Lq, Lk) additive, when has_attn (on top of the causal mask)
    bool has_key_padding = false, has_attn = false;

    void set_key_padding(const xt::xarray<bool>& blocked) { set_key_padding(mask_from_bool<T>(blocked)); }
    void set_key_padding(Array<T> additive) {
        key_padding = std::move(additive);
        has_key_padding = true;
    }
    void set_attn(const xt::xarray<bool>& blocked) { set_attn(mask_from_bool<T>(blocked)); }
    void set_attn(Array<T> additive) {
        attn = std::move(additive);
        has_attn = true;
    }
    // Key padding from sequence lengths: positions >= len[b] are blocked.
    static AttentionMask from_lengths(const std::vector<std::size_t>& len, std::size_t Lk);
};

// Keys and values (B, H, Lk, d) accumulated during incremental decoding.
template <class T>
struct KVCache {
    Var<T> k, v;
    std::size_t length() const { return k.defined() ? k.dim(2) : 0; }
};

template <class T>
class MultiHeadAttention : public Module<T> {
public:
    MultiHeadAttention(std::size_t d_model, std::size_t heads, double attn_dropout, const AttentionSite& site,
                       const std::vector<std::shared_ptr<PositionEncoding<T>>>& positions, Rng& init_rng,
                       Rng& dropout_rng);

    // x (B, Lq, D) queries at positions q_offset..; kv (B, Lk, D) the key/value source (x itself for
    // self-attention, the encoder memory for encoder-decoder attention) -> (B, Lq, D).
    // With a cache, self-attention appends the new keys/values; encoder-decoder attention projects the
    // memory once and reuses it. `weights`, when given, receives the attention weights (B, H, Lq, Lk).
    Var<T> forward(const Var<T>& x, const Var<T>& kv, const AttentionMask<T>* mask, KVCache<T>* cache = nullptr,
                   std::size_t q_offset = 0, Var<T>* weights = nullptr) const;

    const AttentionSite& site() const { return site_; }

    std::shared_ptr<Linear<T>> q_proj, k_proj, v_proj, out_proj;
    std::shared_ptr<Dropout<T>> attn_drop;
    std::vector<std::shared_ptr<AttentionPosition<T>>> hooks;  // per-layer position hooks

private:
    // (B, L, D) -> (B, H, L, d)
    Var<T> split_heads(const Var<T>& x) const;
    std::size_t d_model_, heads_, head_dim_;
    AttentionSite site_;
};

// Whether attention may run its fused core (autodiff attention_core) for hooks that claim bias_only(); on by
// default. The generic tests turn it off to compare the two paths. Returns the previous setting.
bool set_fused_attention(bool on);

extern template struct AttentionMask<float>;
extern template struct AttentionMask<double>;
extern template class MultiHeadAttention<float>;
extern template class MultiHeadAttention<double>;

}  // namespace relpos::nn
