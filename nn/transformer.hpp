// Encoder layer, decoder layer and the Transformer (Vaswani et al. 2017) in two families: the
// encoder-decoder (sequence-to-sequence) model and the decoder-only (causal language) model, which is the
// decoder stack without its encoder-decoder attention. Both share the layers, the pluggable position
// encodings and incremental decoding.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "nn/attention.hpp"
#include "nn/embedding.hpp"
#include "nn/feed_forward.hpp"
#include "nn/layer_norm.hpp"

namespace relpos::nn {

enum class NormOrder { Post, Pre };  // post: x = LN(x + f(x)) (the paper's); pre: x = x + f(LN(x))

// Residual block around one sub-layer, in either norm order.
template <class T, class F>
Var<T> residual(NormOrder order, const LayerNorm<T>& norm, const Dropout<T>& drop, const Var<T>& x, F&& sublayer) {
    if (order == NormOrder::Post) return norm.forward(x + drop.forward(sublayer(x)));
    return x + drop.forward(sublayer(norm.forward(x)));
}

struct LayerDims {
    std::size_t d_model = 256, heads = 8, d_ff = 1024;
    double dropout = 0.1, attention_dropout = 0.1;
    NormOrder norm = NormOrder::Post;
};

template <class T>
class EncoderLayer : public Module<T> {
public:
    EncoderLayer(const LayerDims& d, std::size_t index, const std::vector<std::shared_ptr<PositionEncoding<T>>>& pos,
                 Rng& init_rng, Rng& dropout_rng);
    // x (B, L, D) -> (B, L, D); weights receives the self-attention weights when given.
    Var<T> forward(const Var<T>& x, const AttentionMask<T>* mask, Var<T>* weights = nullptr) const;

    std::shared_ptr<MultiHeadAttention<T>> self_attn;
    std::shared_ptr<FeedForward<T>> ffn;
    std::shared_ptr<LayerNorm<T>> norm1, norm2;
    std::shared_ptr<Dropout<T>> drop;
    NormOrder order;
};

template <class T>
struct DecoderLayerCache {
    KVCache<T> self, cross;
};

template <class T>
class DecoderLayer : public Module<T> {
public:
    // cross = false: a decoder-only layer (causal self-attention and feed-forward; its norms are named
    // norm1 and norm2), which forward() runs without a memory.
    DecoderLayer(const LayerDims& d, std::size_t index, const std::vector<std::shared_ptr<PositionEncoding<T>>>& pos,
                 Rng& init_rng, Rng& dropout_rng, bool cross = true);
    // x (B, Lt, D) at positions offset.., memory (B, Ls, D) -> (B, Lt, D)
    Var<T> forward(const Var<T>& x, const Var<T>& memory, const AttentionMask<T>* memory_mask,
                   DecoderLayerCache<T>* cache = nullptr, std::size_t offset = 0, Var<T>* self_weights = nullptr,
                   Var<T>* cross_weights = nullptr) const;
    // Decoder-only, no cache: x (B, L, D) at positions 0.. -> (B, tail, D), the layer's output at the last
    // `tail` positions alone, their queries seeing every key of x. The same rows as forward(x, ...) (each
    // row's computation is the same), for a window whose last positions alone are scored: only the top
    // layer can be cut so, since every layer below must give all the keys the one above reads.
    Var<T> forward_last(const Var<T>& x, std::size_t tail) const;

    std::shared_ptr<MultiHeadAttention<T>> self_attn, cross_attn;  // cross_attn: null in a decoder-only layer
    std::shared_ptr<FeedForward<T>> ffn;
    std::shared_ptr<LayerNorm<T>> norm1, norm2, norm3;                // norm2: null in a decoder-only layer
    std::shared_ptr<Dropout<T>> drop;
    NormOrder order;
};

// What the position encodings are: a factory called once per side (encoder, decoder).
template <class T>
using PositionFactory = std::function<std::vector<std::shared_ptr<PositionEncoding<T>>>(const PositionContext&)>;

// Which stack a model is: encoder + decoder (translation, seq2seq tasks); a decoder alone (language
// models and prompt -> answer tasks), with no encoder, no source embedding and no cross-attention; or an
// encoder alone (every position sees every other, one prediction per position: the non-autoregressive
// setting of Ruoss et al. 2023 and Delétang et al. 2023), with no decoder.
enum class Family { EncoderDecoder, DecoderOnly, EncoderOnly };
const char* family_name(Family f);  // "encoder_decoder" | "decoder_only" | "encoder_only"

struct TransformerConfig {
    Family family = Family::EncoderDecoder;
    std::size_t src_vocab = 8000, tgt_vocab = 8000;  // decoder- and encoder-only: tgt_vocab is the vocabulary
    LayerDims dims;
    // decoder-only: encoder_layers is not used; encoder-only: decoder_layers is not used
    std::size_t encoder_layers = 3, decoder_layers = 3;
    std::string share_embeddings = "all";  // none | decoder (target embedding = output projection) | all
    bool scale_embeddings = true;          // multiply embeddings by sqrt(d_model)
    std::int32_t pad_id = 0;
    std::uint64_t seed = 1;                // parameter initialisation and dropout streams
};

// Incremental decoding state: one cache per decoder layer, the encoder memory and its mask.
template <class T>
struct DecoderState {
    std::vector<DecoderLayerCache<T>> layers;
    Var<T> memory;               // (B, Ls, D); undefined for a decoder-only model
    AttentionMask<T> memory_mask;
    std::size_t step = 0;        // tokens already fed
    // The most positions this decode will feed (prompt and output); encodings with randomized_eval: sample
    // draw that many positions at the first step, so the decoder must say it (0 = not said).
    std::size_t max_positions = 0;
    // Keeps only the given batch rows (in that order): beam search reordering.
    void select(const std::vector<std::size_t>& rows);
};

template <class T>
class Transformer : public Module<T> {
public:
    Transformer(const TransformerConfig& cfg, const PositionFactory<T>& positions);

    // src ids (B*Ls, row-major, padded with pad_id) -> memory (B, Ls, D).
    Var<T> encode(const std::vector<std::int32_t>& src, std::size_t B, std::size_t Ls, const AttentionMask<T>& src_mask,
                  std::vector<Var<T>>* attn_weights = nullptr) const;
    // tgt_in ids (B*Lt) -> logits (B, Lt, V) given the memory.
    Var<T> decode(const std::vector<std::int32_t>& tgt_in, std::size_t B, std::size_t Lt, const Var<T>& memory,
                  const AttentionMask<T>& src_mask, std::vector<Var<T>>* self_weights = nullptr) const;
    // Decoder-only: ids (B*L, right-padded) -> logits (B, L, V), each position seeing itself and the
    // positions before it (padding after a row's end is never seen by its real tokens).
    Var<T> forward_causal(const std::vector<std::int32_t>& ids, std::size_t B, std::size_t L,
                          std::vector<Var<T>>* self_weights = nullptr) const;
    // Decoder-only evaluation: the logits (R, V) at the flat positions rows[i] = b * L + t only, each row the
    // one forward_causal computes there up to float rounding (OpenBLAS rounds a row differently with the
    // number of rows multiplied). The top layer runs only at the last positions of each row that hold every
    // wanted one (DecoderLayer::forward_last), and the output projection only at the wanted rows: a sliding
    // window scores the last few positions of a long window.
    Var<T> forward_causal_rows(const std::vector<std::int32_t>& ids, std::size_t B, std::size_t L,
                               const std::vector<std::int32_t>& rows) const;
    // Encoder-only: ids (B*L, right-padded with pad_id) -> logits (B, L, V), each position seeing every
    // non-padding position of its row, before and after it.
    Var<T> forward_bidirectional(const std::vector<std::int32_t>& ids, std::size_t B, std::size_t L,
                                 std::vector<Var<T>>* attn_weights = nullptr) const;
    // Incremental decoding: start from the memory (decoder-only: start_decoding() with no arguments),
    // then feed one token per row per step.
    // max_positions: the most tokens the decode will feed (see DecoderState::max_positions).
    DecoderState<T> start_decoding(const Var<T>& memory, const AttentionMask<T>& src_mask,
                                   std::size_t max_positions = 0) const;
    DecoderState<T> start_decoding(std::size_t max_positions = 0) const {
        return start_decoding(Var<T>(), AttentionMask<T>(), max_positions);
    }
    Var<T> decode_step(const std::vector<std::int32_t>& tokens, DecoderState<T>& state) const;  // -> (B, V)

    // Key padding mask for a padded id matrix (B, L).
    AttentionMask<T> padding_mask(const std::vector<std::int32_t>& ids, std::size_t B, std::size_t L) const;

    // Randomized positions (Ruoss et al. 2023): while training, each forward pass of a side draws a sorted
    // random subset of [0, N) as the positions of its L indices for every encoding with randomized: N
    // (one draw per batch, from the dropout stream, so a resumed run draws the same); in eval mode the
    // positions are 0.. as always, unless the encoding has randomized_eval: sample, which draws from the
    // evaluation stream (restarted by every eval(), so an evaluation is the same whenever it runs).
    void draw_positions(const std::vector<std::shared_ptr<PositionEncoding<T>>>& side, std::size_t L) const;

    // Switching to eval mode restarts the evaluation stream of randomized positions.
    void train(bool on = true) override;
    // Whether evaluation batches must hold one length each: an encoding has randomized_eval: sample_by_length.
    bool eval_batches_by_length() const {
        for (const auto* side : {&enc_pos, &dec_pos})
            for (const auto& p : *side)
                if (p->randomized_range() && p->randomized_eval_by_length()) return true;
        return false;
    }

    Rng& dropout_rng() { return dropout_rng_; }
    const TransformerConfig& config() const { return cfg_; }
    // Longest sequence the position encodings accept on each side.
    std::size_t max_source_length() const;
    std::size_t max_target_length() const;

    std::shared_ptr<Embedding<T>> src_embed, tgt_embed;
    std::shared_ptr<Linear<T>> out_proj;  // only when the output projection is not shared
    std::vector<std::shared_ptr<PositionEncoding<T>>> enc_pos, dec_pos;
    std::vector<std::shared_ptr<EncoderLayer<T>>> enc_layers;
    std::vector<std::shared_ptr<DecoderLayer<T>>> dec_layers;
    std::shared_ptr<LayerNorm<T>> enc_norm, dec_norm;  // final norms (pre-norm only)
    std::shared_ptr<Dropout<T>> embed_drop;

private:
    Var<T> embed_target(const std::vector<std::int32_t>& ids, std::size_t B, std::size_t L, std::size_t offset) const;
    // The decoder stack up to its final norm: (B, Lt, D), before the output projection. With tail < Lt
    // (decoder-only, no memory) the top layer computes only the last `tail` positions of every row
    // (DecoderLayer::forward_last) and the result is (B, tail, D); 0 = every position.
    Var<T> decode_hidden(const std::vector<std::int32_t>& tgt_in, std::size_t B, std::size_t Lt, const Var<T>& memory,
                         const AttentionMask<T>& src_mask, std::vector<Var<T>>* self_weights, std::size_t tail = 0) const;
    Var<T> project(const Var<T>& h) const;
    TransformerConfig cfg_;
    Rng init_rng_;
    mutable Rng dropout_rng_;  // dropout layers hold it by reference; draw_positions draws from it too
    mutable Rng eval_positions_rng_;  // randomized_eval: sample draws from it; eval() restarts it
};

extern template class EncoderLayer<float>;
extern template class EncoderLayer<double>;
extern template class DecoderLayer<float>;
extern template class DecoderLayer<double>;
extern template class Transformer<float>;
extern template class Transformer<double>;

}  // namespace relpos::nn
