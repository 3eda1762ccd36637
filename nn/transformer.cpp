#include "nn/transformer.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace relpos::nn {

// ---------------------------------------------------------------- layers

template <class T>
EncoderLayer<T>::EncoderLayer(const LayerDims& d, std::size_t index,
                              const std::vector<std::shared_ptr<PositionEncoding<T>>>& pos, Rng& init_rng,
                              Rng& dropout_rng)
    : order(d.norm) {
    AttentionSite site{AttentionSite::EncoderSelf, index, d.heads, d.d_model / std::max<std::size_t>(d.heads, 1)};
    self_attn = this->register_module(
        "self_attn", std::make_shared<MultiHeadAttention<T>>(d.d_model, d.heads, d.attention_dropout, site, pos,
                                                             init_rng, dropout_rng));
    ffn = this->register_module("ffn", std::make_shared<FeedForward<T>>(d.d_model, d.d_ff, d.dropout, init_rng, dropout_rng));
    norm1 = this->register_module("norm1", std::make_shared<LayerNorm<T>>(d.d_model));
    norm2 = this->register_module("norm2", std::make_shared<LayerNorm<T>>(d.d_model));
    drop = this->register_module("dropout", std::make_shared<Dropout<T>>(d.dropout, dropout_rng));
}

template <class T>
Var<T> EncoderLayer<T>::forward(const Var<T>& x, const AttentionMask<T>* mask, Var<T>* weights) const {
    Var<T> h = residual<T>(order, *norm1, *drop, x,
                           [&](const Var<T>& y) { return self_attn->forward(y, y, mask, nullptr, 0, weights); });
    return residual<T>(order, *norm2, *drop, h, [&](const Var<T>& y) { return ffn->forward(y); });
}

template <class T>
DecoderLayer<T>::DecoderLayer(const LayerDims& d, std::size_t index,
                              const std::vector<std::shared_ptr<PositionEncoding<T>>>& pos, Rng& init_rng,
                              Rng& dropout_rng, bool cross)
    : order(d.norm) {
    const std::size_t hd = d.d_model / std::max<std::size_t>(d.heads, 1);
    AttentionSite self_site{AttentionSite::DecoderSelf, index, d.heads, hd};
    AttentionSite cross_site{AttentionSite::Cross, index, d.heads, hd};
    self_attn = this->register_module(
        "self_attn", std::make_shared<MultiHeadAttention<T>>(d.d_model, d.heads, d.attention_dropout, self_site, pos,
                                                             init_rng, dropout_rng));
    if (cross)
        cross_attn = this->register_module(
            "cross_attn", std::make_shared<MultiHeadAttention<T>>(d.d_model, d.heads, d.attention_dropout, cross_site,
                                                                  pos, init_rng, dropout_rng));
    ffn = this->register_module("ffn", std::make_shared<FeedForward<T>>(d.d_model, d.d_ff, d.dropout, init_rng, dropout_rng));
    norm1 = this->register_module("norm1", std::make_shared<LayerNorm<T>>(d.d_model));
    if (cross) norm2 = this->register_module("norm2", std::make_shared<LayerNorm<T>>(d.d_model));
    norm3 = this->register_module(cross ? "norm3" : "norm2", std::make_shared<LayerNorm<T>>(d.d_model));
    drop = this->register_module("dropout", std::make_shared<Dropout<T>>(d.dropout, dropout_rng));
}

template <class T>
Var<T> DecoderLayer<T>::forward(const Var<T>& x, const Var<T>& memory, const AttentionMask<T>* memory_mask,
                                DecoderLayerCache<T>* cache, std::size_t offset, Var<T>* self_weights,
                                Var<T>* cross_weights) const {
    Var<T> h = residual<T>(order, *norm1, *drop, x, [&](const Var<T>& y) {
        return self_attn->forward(y, y, nullptr, cache ? &cache->self : nullptr, offset, self_weights);
    });
    if (cross_attn)
        h = residual<T>(order, *norm2, *drop, h, [&](const Var<T>& y) {
            return cross_attn->forward(y, memory, memory_mask, cache ? &cache->cross : nullptr, offset, cross_weights);
        });
    return residual<T>(order, *norm3, *drop, h, [&](const Var<T>& y) { return ffn->forward(y); });
}

template <class T>
Var<T> DecoderLayer<T>::forward_last(const Var<T>& x, std::size_t tail) const {
    if (cross_attn) throw std::logic_error("DecoderLayer::forward_last: only a decoder-only layer (no memory)");
    const std::size_t L = x.dim(1);
    if (tail == 0 || tail > L)
        throw std::out_of_range(fmt::format("DecoderLayer::forward_last: {} last positions of {}", tail, L));
    if (tail == L) return forward(x, Var<T>(), nullptr);
    const std::size_t first = L - tail;  // the queries' positions are first.., the keys' 0..
    const Var<T> xq = slice(x, 1, first, L);
    Var<T> h;
    if (order == NormOrder::Post) {
        h = norm1->forward(xq + drop->forward(self_attn->forward(xq, x, nullptr, nullptr, first)));
    } else {  // residual<T>'s pre-norm form, the norm taken over every position once
        const Var<T> y = norm1->forward(x);
        h = xq + drop->forward(self_attn->forward(slice(y, 1, first, L), y, nullptr, nullptr, first));
    }
    return residual<T>(order, *norm3, *drop, h, [&](const Var<T>& y) { return ffn->forward(y); });
}

// ---------------------------------------------------------------- decoder state

namespace {
// Rows of a tensor along axis 0 (no gradient: decoding runs without a tape).
template <class T>
Array<T> take_rows(const Array<T>& a, const std::vector<std::size_t>& rows) {
    Shape s = shape_of(a);
    const std::size_t row = a.size() / std::max<std::size_t>(s[0], 1);
    s[0] = rows.size();
    Array<T> r = uninit<T>(s);
    for (std::size_t i = 0; i < rows.size(); ++i) std::copy_n(a.data() + rows[i] * row, row, r.data() + i * row);
    return r;
}
template <class T>
void take_rows(Var<T>& v, const std::vector<std::size_t>& rows) {
    if (v.defined()) v = Var<T>(take_rows(v.value(), rows));
}
}  // namespace

template <class T>
void DecoderState<T>::select(const std::vector<std::size_t>& rows) {
    for (auto& l : layers) {
        take_rows(l.self.k, rows);
        take_rows(l.self.v, rows);
        take_rows(l.cross.k, rows);
        take_rows(l.cross.v, rows);
    }
    take_rows(memory, rows);
    if (memory_mask.has_key_padding) memory_mask.key_padding = take_rows(memory_mask.key_padding, rows);
}

// ---------------------------------------------------------------- model

namespace {
std::uint64_t eval_positions_seed(std::uint64_t seed) { return seed ^ 0xe7a1e7a1e7a1ULL; }
}  // namespace

template <class T>
Transformer<T>::Transformer(const TransformerConfig& cfg, const PositionFactory<T>& positions)
    : cfg_(cfg), init_rng_(cfg.seed), dropout_rng_(cfg.seed ^ 0x5eed5eed5eedULL),
      eval_positions_rng_(eval_positions_seed(cfg.seed)) {
    const auto& d = cfg.dims;
    if (d.heads == 0 || d.d_model % d.heads != 0)
        throw std::invalid_argument(fmt::format("d_model {} is not divisible by heads {}", d.d_model, d.heads));
    const std::string& share = cfg.share_embeddings;
    if (share != "none" && share != "decoder" && share != "all")
        throw std::invalid_argument("share_embeddings must be none, decoder or all, got '" + share + "'");
    if (share == "all" && cfg.family == Family::EncoderDecoder && cfg.src_vocab != cfg.tgt_vocab)
        throw std::invalid_argument(fmt::format(
            "share_embeddings: all needs one joint vocabulary, got source {} and target {}", cfg.src_vocab, cfg.tgt_vocab));

    const bool decoder_only = cfg.family == Family::DecoderOnly;
    const bool encoder_only = cfg.family == Family::EncoderOnly;
    if (decoder_only || encoder_only) {
        // One vocabulary, one embedding ("embed"); share_embeddings all and decoder both tie it to the output.
        tgt_embed = src_embed = this->register_module(
            "embed", std::make_shared<Embedding<T>>(cfg.tgt_vocab, d.d_model, cfg.scale_embeddings, init_rng_));
    } else {
        src_embed = this->register_module("src_embed", std::make_shared<Embedding<T>>(cfg.src_vocab, d.d_model,
                                                                                       cfg.scale_embeddings, init_rng_));
    }
    if (share == "all" || decoder_only || encoder_only)
        tgt_embed = src_embed;  // one table: registered once
    else
        tgt_embed = this->register_module("tgt_embed", std::make_shared<Embedding<T>>(cfg.tgt_vocab, d.d_model,
                                                                                       cfg.scale_embeddings, init_rng_));
    if (share == "none")
        out_proj = this->register_module("out_proj", std::make_shared<Linear<T>>(d.d_model, cfg.tgt_vocab, true, init_rng_));
    embed_drop = this->register_module("embed_dropout", std::make_shared<Dropout<T>>(d.dropout, dropout_rng_));

    PositionContext ectx{d.d_model, d.heads, Side::Encoder, &init_rng_};
    PositionContext dctx{d.d_model, d.heads, Side::Decoder, &init_rng_};
    if (!decoder_only) enc_pos = positions(ectx);
    if (!encoder_only) dec_pos = positions(dctx);
    for (std::size_t i = 0; i < enc_pos.size(); ++i)
        this->register_module(enc_pos.size() == 1 ? "encoder.position" : fmt::format("encoder.position{}", i), enc_pos[i]);
    for (std::size_t i = 0; i < dec_pos.size(); ++i)
        this->register_module(dec_pos.size() == 1 ? "decoder.position" : fmt::format("decoder.position{}", i), dec_pos[i]);

    for (std::size_t i = 0; i < (decoder_only ? 0 : cfg.encoder_layers); ++i)
        enc_layers.push_back(this->register_module(
            fmt::format("encoder.layers.{}", i), std::make_shared<EncoderLayer<T>>(d, i, enc_pos, init_rng_, dropout_rng_)));
    for (std::size_t i = 0; i < (encoder_only ? 0 : cfg.decoder_layers); ++i)
        dec_layers.push_back(this->register_module(
            fmt::format("decoder.layers.{}", i), std::make_shared<DecoderLayer<T>>(d, i, dec_pos, init_rng_, dropout_rng_, !decoder_only)));
    if (d.norm == NormOrder::Pre) {
        if (!decoder_only) enc_norm = this->register_module("encoder.norm", std::make_shared<LayerNorm<T>>(d.d_model));
        if (!encoder_only) dec_norm = this->register_module("decoder.norm", std::make_shared<LayerNorm<T>>(d.d_model));
    }
}

template <class T>
AttentionMask<T> Transformer<T>::padding_mask(const std::vector<std::int32_t>& ids, std::size_t B, std::size_t L) const {
    xt::xarray<bool> pad = xt::xarray<bool>::from_shape({B, L});
    for (std::size_t i = 0; i < B * L; ++i) pad.data()[i] = ids[i] == cfg_.pad_id;
    AttentionMask<T> m;
    m.set_key_padding(pad);
    return m;
}

template <class T>
Var<T> Transformer<T>::encode(const std::vector<std::int32_t>& src, std::size_t B, std::size_t Ls,
                              const AttentionMask<T>& src_mask, std::vector<Var<T>>* attn_weights) const {
    if (cfg_.family == Family::DecoderOnly)
        throw std::logic_error("Transformer::encode: a decoder-only model has no encoder (use forward_causal)");
    draw_positions(enc_pos, Ls);
    Var<T> x = src_embed->forward(src, {B, Ls});  // (B, Ls, D)
    for (auto& p : enc_pos) x = p->embed(x, 0);
    x = embed_drop->forward(x);
    for (auto& layer : enc_layers) {
        Var<T> w;
        x = layer->forward(x, &src_mask, attn_weights ? &w : nullptr);
        if (attn_weights) attn_weights->push_back(w);
    }
    return enc_norm ? enc_norm->forward(x) : x;
}

template <class T>
Var<T> Transformer<T>::embed_target(const std::vector<std::int32_t>& ids, std::size_t B, std::size_t L,
                                    std::size_t offset) const {
    Var<T> y = tgt_embed->forward(ids, {B, L});
    for (auto& p : dec_pos) y = p->embed(y, offset);
    return embed_drop->forward(y);
}

template <class T>
Var<T> Transformer<T>::project(const Var<T>& h) const {
    return out_proj ? out_proj->forward(h) : tgt_embed->project(h);
}

template <class T>
Var<T> Transformer<T>::decode_hidden(const std::vector<std::int32_t>& tgt_in, std::size_t B, std::size_t Lt,
                                     const Var<T>& memory, const AttentionMask<T>& src_mask,
                                     std::vector<Var<T>>* self_weights, std::size_t tail) const {
    if (cfg_.family == Family::EncoderOnly)
        throw std::logic_error("Transformer::decode: an encoder-only model has no decoder (use forward_bidirectional)");
    const bool cut = tail != 0 && tail < Lt && !dec_layers.empty();
    if (cut && (memory.defined() || self_weights))
        throw std::logic_error("Transformer::decode_hidden: only a decoder-only stack without weights computes a tail");
    draw_positions(dec_pos, Lt);
    Var<T> y = embed_target(tgt_in, B, Lt, 0);
    for (std::size_t i = 0; i < dec_layers.size(); ++i) {
        if (cut && i + 1 == dec_layers.size()) {
            y = dec_layers[i]->forward_last(y, tail);  // (B, tail, D)
            break;
        }
        Var<T> w;
        y = dec_layers[i]->forward(y, memory, &src_mask, nullptr, 0, self_weights ? &w : nullptr);
        if (self_weights) self_weights->push_back(w);
    }
    if (dec_norm) y = dec_norm->forward(y);
    return y;  // (B, Lt, D), or (B, tail, D)
}

template <class T>
Var<T> Transformer<T>::decode(const std::vector<std::int32_t>& tgt_in, std::size_t B, std::size_t Lt,
                              const Var<T>& memory, const AttentionMask<T>& src_mask,
                              std::vector<Var<T>>* self_weights) const {
    return project(decode_hidden(tgt_in, B, Lt, memory, src_mask, self_weights));  // (B, Lt, V)
}

template <class T>
Var<T> Transformer<T>::forward_causal_rows(const std::vector<std::int32_t>& ids, std::size_t B, std::size_t L,
                                          const std::vector<std::int32_t>& rows) const {
    if (cfg_.family != Family::DecoderOnly)
        throw std::logic_error("Transformer::forward_causal_rows: only a decoder-only model predicts causally");
    for (std::int32_t r : rows)
        if (r < 0 || static_cast<std::size_t>(r) >= B * L)
            throw std::out_of_range(fmt::format("Transformer::forward_causal_rows: row {} outside the {} x {} positions", r, B, L));
    // The top layer computes only the last `tail` positions of every row, tail the fewest that hold every
    // wanted row (a sliding window scores its last stride positions); the layers below compute them all.
    std::size_t tail = 0;
    for (std::int32_t r : rows) tail = std::max(tail, L - static_cast<std::size_t>(r) % L);
    if (dec_layers.empty() || tail == 0) tail = L;
    const Var<T> h = decode_hidden(ids, B, L, Var<T>(), AttentionMask<T>(), nullptr, tail);  // (B, tail, D)
    // embedding() is a row gather: the hidden states of the wanted positions, (R, D), then projected alone.
    std::vector<std::int32_t> at(rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const std::size_t b = static_cast<std::size_t>(rows[i]) / L, t = static_cast<std::size_t>(rows[i]) % L;
        at[i] = static_cast<std::int32_t>(b * tail + (t - (L - tail)));
    }
    return project(embedding(reshape(h, {B * tail, h.shape().back()}), at, {at.size()}));  // (R, V)
}

template <class T>
Var<T> Transformer<T>::forward_bidirectional(const std::vector<std::int32_t>& ids, std::size_t B, std::size_t L,
                                            std::vector<Var<T>>* attn_weights) const {
    if (cfg_.family != Family::EncoderOnly)
        throw std::logic_error("Transformer::forward_bidirectional: only an encoder-only model predicts from its encoder");
    return project(encode(ids, B, L, padding_mask(ids, B, L), attn_weights));  // (B, L, V)
}

template <class T>
Var<T> Transformer<T>::forward_causal(const std::vector<std::int32_t>& ids, std::size_t B, std::size_t L,
                                     std::vector<Var<T>>* self_weights) const {
    if (cfg_.family != Family::DecoderOnly)
        throw std::logic_error("Transformer::forward_causal: an encoder-decoder model decodes from a memory (use decode)");
    return decode(ids, B, L, Var<T>(), AttentionMask<T>(), self_weights);
}

template <class T>
void Transformer<T>::train(bool on) {
    Module<T>::train(on);
    if (!on) eval_positions_rng_ = Rng(eval_positions_seed(cfg_.seed));
}

namespace {
// Floyd's algorithm: k distinct values of [0, n) with k draws, then sorted.
std::vector<std::size_t> sorted_sample(Rng& rng, std::size_t n, std::size_t k) {
    std::vector<std::size_t> v;
    v.reserve(k);
    for (std::size_t j = n - k; j < n; ++j) {
        const std::size_t t = static_cast<std::size_t>(rng.below(j + 1));
        v.push_back(std::find(v.begin(), v.end(), t) == v.end() ? t : j);
    }
    std::sort(v.begin(), v.end());
    return v;
}
}  // namespace

template <class T>
void Transformer<T>::draw_positions(const std::vector<std::shared_ptr<PositionEncoding<T>>>& side, std::size_t L) const {
    for (auto& p : side) {
        const std::size_t N = p->randomized_range();
        if (N == 0) continue;
        const bool training = this->training();
        if (!training && !p->randomized_at_eval()) {
            p->set_position_map(PositionMap{});
            continue;
        }
        if (L > N)
            throw std::length_error(fmt::format("randomized positions: a sequence of length {} does not fit the range "
                                                "[0, {}) (raise the encoding's randomized option)", L, N));
        Rng& rng = training ? dropout_rng_ : eval_positions_rng_;
        if (p->randomized_distances()) {  // the offsets 1 .. L-1: L-1 distinct values of [1, N), sorted
            std::vector<std::size_t> d = sorted_sample(rng, N - 1, L > 0 ? L - 1 : 0);
            for (auto& x : d) ++x;
            p->set_position_map(PositionMap{nullptr, std::make_shared<const std::vector<std::size_t>>(std::move(d))});
            continue;
        }
        std::vector<std::size_t> pos = sorted_sample(rng, N, L);
        p->set_position_map(PositionMap{std::make_shared<const std::vector<std::size_t>>(std::move(pos)), nullptr});
    }
}

template <class T>
DecoderState<T> Transformer<T>::start_decoding(const Var<T>& memory, const AttentionMask<T>& src_mask,
                                               std::size_t max_positions) const {
    if (cfg_.family == Family::EncoderOnly)
        throw std::logic_error("Transformer::start_decoding: an encoder-only model has no decoder to decode with");
    DecoderState<T> s;
    s.max_positions = max_positions;
    s.layers.resize(dec_layers.size());
    s.memory = memory;
    s.memory_mask = src_mask;
    return s;
}

template <class T>
Var<T> Transformer<T>::decode_step(const std::vector<std::int32_t>& tokens, DecoderState<T>& state) const {
    const std::size_t B = tokens.size();
    if (state.step == 0)  // decoding sees the real positions 0.., whatever the mode, unless randomized_eval: sample
        for (auto& p : dec_pos) {
            if (!p->randomized_range()) continue;
            if (!p->randomized_at_eval()) {
                p->set_position_map(PositionMap{});
                continue;
            }
            if (state.max_positions == 0)
                throw std::logic_error("Transformer::decode_step: randomized_eval: sample needs the decode's length "
                                       "(start_decoding's max_positions)");
            if (this->training()) throw std::logic_error("Transformer::decode_step: decode in eval mode");
            draw_positions({p}, state.max_positions);
        }
    Var<T> y = embed_target(tokens, B, 1, state.step);  // (B, 1, D) at position `step`
    for (std::size_t i = 0; i < dec_layers.size(); ++i)
        y = dec_layers[i]->forward(y, state.memory, &state.memory_mask, &state.layers[i], state.step);
    if (dec_norm) y = dec_norm->forward(y);
    ++state.step;
    return reshape(project(y), {B, cfg_.tgt_vocab});
}

template <class T>
std::size_t Transformer<T>::max_source_length() const {
    std::size_t m = static_cast<std::size_t>(-1);
    for (auto& p : enc_pos) m = std::min(m, p->max_length());
    return m;
}

template <class T>
std::size_t Transformer<T>::max_target_length() const {
    std::size_t m = static_cast<std::size_t>(-1);
    for (auto& p : dec_pos) m = std::min(m, p->max_length());
    return m;
}

const char* family_name(Family f) {
    switch (f) {
        case Family::DecoderOnly: return "decoder_only";
        case Family::EncoderOnly: return "encoder_only";
        default: return "encoder_decoder";
    }
}

template struct DecoderState<float>;
template struct DecoderState<double>;
template class EncoderLayer<float>;
template class EncoderLayer<double>;
template class DecoderLayer<float>;
template class DecoderLayer<double>;
template class Transformer<float>;
template class Transformer<double>;

}  // namespace relpos::nn
