// Token-budget batching with length bucketing. Training batches are reshuffled every epoch from an Rng
// seeded by (seed, epoch), so epoch e's batches can be rebuilt after a resume without replaying earlier
// epochs. Evaluation batches keep no randomness and record each row's corpus index.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "experiments/data/example.hpp"

namespace relpos {

// A padded batch; row b holds example index[b].
//
// Decoder-only batches (Layout::DecoderOnly) hold one sequence per row, S = src ++ tgt (the task puts
// any BOS/SEP/EOS into src and tgt itself): tgt_in = S without its last token, tgt_out[t] = S[t + 1] where
// that token belongs to tgt and PAD_ID where it belongs to src (context the loss does not score); Ls = 0,
// src is empty, Lt = |S| - 1 and tgt_len[b] = |S| - 1.
// Encoder-only batches (Layout::EncoderOnly) hold one input per row, src (which the task builds whole: for an
// answer of n tokens, the prompt then n slots to fill), and label its last |tgt| positions with tgt:
// tgt_in = src, tgt_out[t] = tgt[t - (|src| - |tgt|)] for those positions and PAD_ID elsewhere; Ls = 0,
// Lt = |src|, tgt_len[b] = |src|.
struct Batch {
    std::size_t B = 0, Ls = 0, Lt = 0;  // rows, padded source length, padded target length (tgt len + 1)
    std::vector<std::int32_t> src;      // (B, Ls) row-major: x, then PAD_ID
    std::vector<std::int32_t> tgt_in;   // (B, Lt): BOS_ID, y, then PAD_ID   (decoder input, teacher forcing)
    std::vector<std::int32_t> tgt_out;  // (B, Lt): y, EOS_ID, then PAD_ID   (what the loss predicts)
    std::vector<std::size_t> src_len;   // (B) = |x|
    std::vector<std::size_t> tgt_len;   // (B) = |y| + 1, the non-pad positions of row b in tgt_in / tgt_out
    std::size_t n_tgt_tokens = 0;       // sum of tgt_len: non-pad entries of tgt_out (the loss normaliser)
    std::vector<std::size_t> index;     // (B) index of each row's example in the vector it was cut from
};

// How a batch lays out an example: the input form of the model family it feeds.
enum class Layout { Seq2Seq, DecoderOnly, EncoderOnly };

struct BatchOptions {
    // A batch's cost is rows * max(Ls, Lt) with Lt = longest target + 1; a batch holds as many examples
    // as keep the cost <= max_tokens. One example that alone exceeds it still forms its own batch.
    std::size_t max_tokens = 4096;
    std::size_t max_batch_size = 0;  // rows per batch at most; 0 = no limit
    // Evaluation: a batch holds examples of one (source, target) length only (randomized_eval:
    // sample_by_length draws one set of positions per batch, which must be each sequence's own length's).
    bool one_length = false;
    // Training only: shuffle, then sort by (src len, tgt len) within chunks of this many examples
    // before cutting; 0 = one chunk (the whole set: least padding, batches still random via the
    // shuffled tie order and the shuffled batch order).
    std::size_t sort_chunk = 0;
    std::uint64_t seed = 0;
    // Seq2Seq: (src, tgt) pairs; DecoderOnly: rows are src ++ tgt sequences, their cost rows * (|S| - 1);
    // EncoderOnly: rows are src, labelled at their last |tgt| positions (see Batch)
    Layout layout = Layout::Seq2Seq;
};

// Cost of a batch with these padded lengths: rows * max(Ls, Lt).
inline std::size_t batch_cost(std::size_t rows, std::size_t Ls, std::size_t Lt) { return rows * (Ls > Lt ? Ls : Lt); }

// Training plan for one epoch: lists of example indices, one per batch, in the order to train on.
// Every example appears exactly once. Depends only on (examples' lengths, options, epoch).
std::vector<std::vector<std::size_t>> plan_train_batches(const std::vector<Example>& examples,
                                                         const BatchOptions& opt, std::uint64_t epoch);

// Evaluation plan: indices sorted by (src len, tgt len, index), cut by the same budget, never shuffled.
// Write hypothesis Batch::index[b] to restore corpus order.
std::vector<std::vector<std::size_t>> plan_eval_batches(const std::vector<Example>& examples,
                                                        const BatchOptions& opt);

// Pads the given examples into a Batch (rows in the order of `indices`).
Batch make_batch(const std::vector<Example>& examples, const std::vector<std::size_t>& indices,
                 Layout layout = Layout::Seq2Seq);

// Data-parallel training (docs/distributed.md): rank `rank` of `ranks` trains on a contiguous share of a
// planned batch, the shares of all ranks partitioning it in order, their sizes differing by one at most
// (the first B % ranks shares are one longer; a share is empty when the batch has fewer rows than ranks).
std::vector<std::size_t> batch_share(const std::vector<std::size_t>& batch, std::size_t rank, std::size_t ranks);
// The loss normaliser of a whole planned batch, make_batch(...).n_tgt_tokens, without building it: every
// rank divides its share's summed loss by this.
std::size_t target_tokens(const std::vector<Example>& examples, const std::vector<std::size_t>& indices, Layout layout);

// plan_* followed by make_batch for each plan entry.
std::vector<Batch> train_batches(const std::vector<Example>& examples, const BatchOptions& opt, std::uint64_t epoch);
std::vector<Batch> eval_batches(const std::vector<Example>& examples, const BatchOptions& opt);

// Drops pairs whose source or target is longer than max_len tokens (content ids, before BOS/EOS) or is
// empty; returns the kept examples in their original order and, if `dropped` is given, how many went.
std::vector<Example> filter_by_length(const std::vector<Example>& examples, std::size_t max_len,
                                      std::size_t* dropped = nullptr);

}  // namespace relpos
