// Decoding with the incremental key/value cache: greedy and beam search with the GNMT length
// penalty lp(Y) = ((5 + |Y|) / 6)^alpha (Wu et al. 2016; the paper: beam 4, alpha 0.6).
#pragma once

#include <cstdint>
#include <vector>

#include "experiments/config/config.hpp"
#include "nn/transformer.hpp"

namespace relpos {

// The longest source relpos decodes, in tokens (eval, translate, and the test and validation splits of a
// run): beyond it decoding one sentence takes minutes and gigabytes (attention is quadratic), and no
// model relpos trains has seen anything near it.
constexpr std::size_t kMaxDecodeSourceTokens = 1024;

struct DecodeOptions {
    std::size_t beam = 4;      // 1 = greedy
    double alpha = 0.6;        // length penalty exponent
    double max_len_a = 1.2;    // output length limit: a * source length + b
    std::size_t max_len_b = 10;
    std::int32_t bos = 2, eos = 3, pad = 0;
};

// Translates a batch of padded sources (B, Ls) -> B token sequences (without BOS/EOS).
std::vector<std::vector<std::int32_t>> translate_batch(const nn::Transformer<float>& model,
                                                       const std::vector<std::int32_t>& src, std::size_t B,
                                                       std::size_t Ls, const std::vector<std::size_t>& src_len,
                                                       const DecodeOptions& opt);

double length_penalty(std::size_t length, double alpha);

// Decoder-only greedy continuation: each prompt (any lengths, BOS etc. included) is fed through the
// incremental cache, then up to max_new tokens are generated per row, stopping at `eos` (not returned).
// Rows advance in lockstep: a row still reading its prompt feeds its next prompt token, a row past it
// feeds its last generated one, so prompts of different lengths share one batch and one cache length.
std::vector<std::vector<std::int32_t>> continue_greedy(const nn::Transformer<float>& model,
                                                       const std::vector<std::vector<std::int32_t>>& prompts,
                                                       std::size_t max_new, std::int32_t eos);

// The decoding settings of eval.* (beam_override > 0 replaces eval.beam, e.g. 1 for greedy validation).
DecodeOptions decode_options(const EvalConfig& e, std::size_t beam_override = 0);

}  // namespace relpos
