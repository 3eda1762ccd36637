// `t5`: T5's relative position bias (Raffel et al. 2020, sec. 2.1). A learned scalar per (bucket,
// head) is added to the attention logits (hook 3):
//
//   logits_hij += table[bucket(j - i), h]
//
// with relative positions bucketed as in T5 (t5_bucket below): small offsets get a bucket each, larger
// ones share log-spaced buckets up to max_distance, beyond which all offsets share the last bucket.
// Bidirectional in the encoder (half of the buckets for keys after the query), causal in the decoder
// (only offsets j - i <= 0 are told apart; future keys are masked anyway). Self-attention only, as T5.
//
// Sharing: as in T5 (whose first layer computes the bias and hands it to the others), each side has one
// table shared by all its self-attention layers, registered once on the encoding
// (encoder.position.relative_attention_bias); each layer gathers from it itself (an (Lq, Lk, H) gather,
// cheap next to q·kᵀ) and the gradients of all layers add up in the table. per_layer: true gives every
// layer a table of its own (<layer>.self_attn.relative_attention_bias), for comparison.
// Init: normal with std d_model^(-1/2) (transformers' T5 _init_weights), rather than zeros: the bias starts
// small, so the model starts close to position-blind but not exactly, and the bucket lookup matters
// (and is tested) from the first step.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "nn/position.hpp"

namespace relpos::nn {

namespace {
// transformers' T5Attention._relative_position_bucket (from Mesh TensorFlow), for one offset
// relative_position = key position - query position. Computed in double (T5 uses float32; the two
// agree on every bucket boundary for the default sizes, e.g. offsets 16, 32, 64 with 32 buckets).
long t5_bucket(long relative_position, bool bidirectional, long num_buckets, long max_distance) {
    long bucket = 0;
    if (bidirectional) {
        num_buckets /= 2;
        if (relative_position > 0) bucket += num_buckets;  // keys after the query: the upper half
        relative_position = std::abs(relative_position);
    } else {
        relative_position = -std::min(relative_position, 0L);  // keys after the query share bucket 0
    }
    // half of the buckets are for exact increments in positions
    const long max_exact = num_buckets / 2;
    if (relative_position < max_exact) return bucket + relative_position;
    // the other half are for logarithmically bigger bins in positions up to max_distance
    const long if_large = max_exact + static_cast<long>(std::log(double(relative_position) / double(max_exact)) /
                                                        std::log(double(max_distance) / double(max_exact)) *
                                                        double(num_buckets - max_exact));
    return bucket + std::min(if_large, num_buckets - 1);
}

struct T5Options {
    long num_buckets, max_distance;
    bool per_layer;
};
}  // namespace

template <class T>
class T5Attention : public AttentionPosition<T> {
public:
    bool bias_only() const override { return true; }
    // table: the side's shared table, or undefined for one of this layer's own.
    T5Attention(const T5Options& o, const AttentionSite& s, const Var<T>& shared, std::size_t d_model, Rng& rng,
                std::shared_ptr<const PositionMap> map)
        : o_(o), bidirectional_(!s.causal()), map_(std::move(map)) {
        table = shared.defined() ? shared
                                 : this->register_parameter(
                                       "relative_attention_bias",
                                       normal_init<T>({std::size_t(o.num_buckets), s.heads}, 1.0 / std::sqrt(double(d_model)), rng));
        if (table.dim(1) != s.heads)
            throw std::invalid_argument(fmt::format("t5: bias table has {} heads, attention has {}", table.dim(1), s.heads));
    }

    // -> (H, Lq, Lk), broadcast over the batch
    Var<T> logit_bias(const Var<T>& q, std::size_t lk, std::size_t q_offset) override {
        const std::size_t lq = q.dim(2);
        // offsets j - (q_offset + i) run from -(q_offset + lq - 1) to lk - 1 - q_offset: bucket each once
        const long lo = -long(q_offset + lq - 1);
        std::vector<std::int32_t> by_offset(lq + lk - 1);
        for (std::size_t n = 0; n < by_offset.size(); ++n)
            by_offset[n] = std::int32_t(t5_bucket(lo + long(n), bidirectional_, o_.num_buckets, o_.max_distance));
        std::vector<std::int32_t> ids(lq * lk);  // (Lq, Lk) bucket ids
        for (std::size_t i = 0; i < lq; ++i)
            for (std::size_t j = 0; j < lk; ++j)
                ids[i * lk + j] = is_identity(map_) ? by_offset[j + (lq - 1) - i]
                                                    : std::int32_t(t5_bucket(long(mapped(map_, j)) - long(mapped(map_, q_offset + i)),
                                                                             bidirectional_, o_.num_buckets, o_.max_distance));
        // gather rows of the (buckets, H) table -> (Lq, Lk, H); the gradient scatter-adds into the table
        return permute(embedding(table, ids, {lq, lk}), {2, 0, 1});
    }

    Var<T> table;  // (num_buckets, H)

private:
    T5Options o_;
    bool bidirectional_;
    std::shared_ptr<const PositionMap> map_;
};

template <class T>
class T5Position : public PositionEncoding<T> {
public:
    T5Position(Options& opt, const PositionContext& c) : d_model_(c.d_model) {
        o_.num_buckets = opt.get_int("num_buckets", 32, 4, 1 << 16);
        o_.max_distance = opt.get_int("max_distance", 128, 1, 1 << 24);
        o_.per_layer = opt.get_bool("per_layer", false);
        // The decoder's exact buckets cover offsets below num_buckets / 2; the log-spaced ones must
        // reach further (T5's formula divides by log(max_distance / max_exact)).
        if (o_.max_distance <= o_.num_buckets / 2)
            opt.fail("max_distance", fmt::format("must be greater than num_buckets / 2 = {} (offsets below that get "
                                                 "exact buckets), got {}",
                                                 o_.num_buckets / 2, o_.max_distance));
        if (!o_.per_layer)
            table_ = this->register_parameter(
                "relative_attention_bias",
                normal_init<T>({std::size_t(o_.num_buckets), c.heads}, 1.0 / std::sqrt(double(c.d_model)), *c.init_rng));
    }
    std::shared_ptr<AttentionPosition<T>> for_attention(const AttentionSite& site, Rng& rng) override {
        if (site.kind == AttentionSite::Cross) return nullptr;
        return std::make_shared<T5Attention<T>>(o_, site, table_, d_model_, rng, this->position_map_handle(site));
    }

private:
    T5Options o_;
    std::size_t d_model_;
    Var<T> table_;  // (num_buckets, H), shared by the side's layers; undefined with per_layer
};

void register_t5(PositionRegistry& r) {
    r.add(position_entry<T5Position>(
        "t5", "learned per-head logit bias for log-spaced relative-position buckets (Raffel et al. 2020, T5)"));
}

}  // namespace relpos::nn
