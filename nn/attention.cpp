#include "nn/attention.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>

#include <fmt/format.h>

namespace relpos::nn {

namespace {
std::atomic<bool> g_fused_attention{true};
}  // namespace

bool set_fused_attention(bool on) { return g_fused_attention.exchange(on); }

template <class T>
AttentionMask<T> AttentionMask<T>::from_lengths(const std::vector<std::size_t>& len, std::size_t Lk) {
    AttentionMask m;
    Array<T> a = zeros<T>({len.size(), Lk});
    const T ninf = -std::numeric_limits<T>::infinity();
    for (std::size_t b = 0; b < len.size(); ++b)
        for (std::size_t j = len[b]; j < Lk; ++j) a(b, j) = ninf;
    m.set_key_padding(std::move(a));
    return m;
}

template <class T>
MultiHeadAttention<T>::MultiHeadAttention(std::size_t d_model, std::size_t heads, double attn_dropout,
                                          const AttentionSite& site,
                                          const std::vector<std::shared_ptr<PositionEncoding<T>>>& positions,
                                          Rng& init_rng, Rng& dropout_rng)
    : d_model_(d_model), heads_(heads), head_dim_(heads ? d_model / heads : 0), site_(site) {
    if (heads == 0 || d_model % heads != 0)
        throw std::invalid_argument(
            fmt::format("attention: d_model {} is not divisible by the number of heads {}", d_model, heads));
    site_.heads = heads;
    site_.head_dim = head_dim_;
    q_proj = this->register_module("q_proj", std::make_shared<Linear<T>>(d_model, d_model, true, init_rng));
    k_proj = this->register_module("k_proj", std::make_shared<Linear<T>>(d_model, d_model, true, init_rng));
    v_proj = this->register_module("v_proj", std::make_shared<Linear<T>>(d_model, d_model, true, init_rng));
    out_proj = this->register_module("out_proj", std::make_shared<Linear<T>>(d_model, d_model, true, init_rng));
    attn_drop = this->register_module("attn_dropout", std::make_shared<Dropout<T>>(attn_dropout, dropout_rng));
    std::vector<std::pair<std::size_t, std::shared_ptr<AttentionPosition<T>>>> made;
    for (std::size_t i = 0; i < positions.size(); ++i)
        if (auto h = positions[i]->for_attention(site_, init_rng)) made.emplace_back(i, h);
    for (auto& [i, h] : made) {
        // One hook at this site: registered without a name of its own (Shaw's tables appear as
        // <layer>.self_attn.rel_k). Several (model.position as a list of encodings that act in attention):
        // each under position<i>, its index in the list, so two encodings of one type never share a
        // parameter name (they used to mix checkpoint entries).
        hooks.push_back(this->register_module(made.size() == 1 ? std::string() : fmt::format("position{}", i), h));
    }
}

template <class T>
Var<T> MultiHeadAttention<T>::split_heads(const Var<T>& x) const {
    const std::size_t B = x.dim(0), L = x.dim(1);
    return permute_view(x, {B, L, heads_, head_dim_}, {0, 2, 1, 3});  // one copy, not two
}

template <class T>
Var<T> MultiHeadAttention<T>::forward(const Var<T>& x, const Var<T>& kv, const AttentionMask<T>* mask,
                                      KVCache<T>* cache, std::size_t q_offset, Var<T>* weights) const {
    if (x.ndim() != 3 || x.dim(2) != d_model_)
        shape_fail("attention", fmt::format("queries must be (B, L, {}), got {}", d_model_, shape_str(x.shape())));
    const std::size_t B = x.dim(0), Lq = x.dim(1);
    const T scale = T(1.0 / std::sqrt(double(head_dim_)));
    Var<T> q = split_heads(q_proj->forward_scaled(x, scale));  // (B, H, Lq, d), pre-scaled by 1/sqrt(d)
    Var<T> k, v;                                          // (B, H, Lk, d)
    // The fused core (below) reads v and writes its result token by token, (B, L, D), as the projections make and
    // read them: no head split of v or merge of the result is copied. Whether it runs is known before the inputs:
    // every hook adds only a bias (all but Shaw's and CoPE's), and no cache keeps v per head.
    const bool fused = g_fused_attention && std::all_of(hooks.begin(), hooks.end(), [](const auto& h) { return h->bias_only(); });
    Var<T> v_tokens;  // (B, Lk, D), when the core may take it so
    if (cache && site_.kind == AttentionSite::Cross && cache->k.defined()) {
        k = cache->k;  // memory projected at the first step
        v = cache->v;
        Var<T> no_k;
        for (auto& h : hooks) h->queries_keys(q, no_k, q_offset, 0);
    } else {
        k = split_heads(k_proj->forward(kv));
        if (fused && !cache)
            v_tokens = v_proj->forward(kv);
        else
            v = split_heads(v_proj->forward(kv));
        const std::size_t k_offset = (cache && site_.kind != AttentionSite::Cross) ? cache->length() : 0;
        for (auto& h : hooks) h->queries_keys(q, k, q_offset, k_offset);
        if (cache) {
            if (site_.kind != AttentionSite::Cross && cache->k.defined()) {
                k = concat<T>({cache->k, k}, 2);
                v = concat<T>({cache->v, v}, 2);
            }
            cache->k = k;
            cache->v = v;
        }
    }
    const Array<T>* key_padding = mask && mask->has_key_padding ? &mask->key_padding : nullptr;
    const Array<T>* attn_mask = mask && mask->has_attn ? &mask->attn : nullptr;
    // Hooks that only add a bias (all but Shaw's and CoPE's): scores, bias, masks, softmax, dropout and the
    // product with v in one fused op, a (batch, head) tile at a time.
    // The first hook whose term is a bucketed relative one (Transformer-XL's) hands it to the core as it is.
    Var<T> bias;
    RelativeLogits<T> rel;
    for (std::size_t i = 0; fused && i < hooks.size(); ++i) {
        if (!rel.table.defined() && hooks[i]->relative_logits(q, k.dim(2), q_offset, rel)) continue;
        if (Var<T> b = hooks[i]->logit_bias(q, k.dim(2), q_offset); b.defined()) bias = bias.defined() ? bias + b : b;
    }
    if (fused && rel.table.defined() && bias.defined() && !attention_core_takes_bias(bias.shape(), B, heads_, Lq, k.dim(2)))
        bias = bias + rel_logits(rel.q, rel.table, rel.k, k.dim(2), q_offset);  // the separate path below, in full
    if (fused && (!bias.defined() || attention_core_takes_bias(bias.shape(), B, heads_, Lq, k.dim(2)))) {
        Var<T> out = attention_core(q, k, v_tokens.defined() ? v_tokens : v, bias, key_padding, attn_mask, site_.causal(),
                                    q_offset, attn_drop->p(), attn_drop->training() ? &attn_drop->rng() : nullptr, weights,
                                    rel.table.defined() ? &rel : nullptr, v_tokens.defined());
        if (!v_tokens.defined()) out = permute_view(out, out.shape(), {0, 2, 1, 3}, {B, Lq, d_model_});  // (B, Lq, D)
        return out_proj->forward(out);
    }
    if (v_tokens.defined()) v = split_heads(v_tokens);  // a bias the core does not take: the separate ops, per head
    Var<T> logits = matmul(q, k, false, true);  // (B, H, Lq, Lk)
    if (fused)  // a bias attention_core does not broadcast: added here
        logits = logits + bias;
    else
        for (auto& h : hooks) logits = h->add_logit_bias(logits, q, q_offset);

    // Masks applied inside the softmax: key padding, the user's attention mask, and causality (query
    // at absolute position q_offset + i sees keys j <= q_offset + i).
    Var<T> attn = attention_softmax(logits, key_padding, attn_mask, site_.causal(), q_offset);
    if (weights) *weights = attn;
    attn = attn_drop->forward(attn);
    Var<T> out = matmul(attn, v);  // (B, H, Lq, d)
    for (auto& h : hooks)
        if (Var<T> o = h->output_term(attn, q_offset); o.defined()) out = out + o;
    out = permute_view(out, out.shape(), {0, 2, 1, 3}, {B, Lq, d_model_});  // (B, Lq, D)
    return out_proj->forward(out);
}

template struct AttentionMask<float>;
template struct AttentionMask<double>;
template class MultiHeadAttention<float>;
template class MultiHeadAttention<double>;

}  // namespace relpos::nn
