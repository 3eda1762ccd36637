// Helpers for nn tests: tiny models with a given position encoding.
#pragma once

#include <map>
#include <string>

#include "nn/transformer.hpp"
#include "tests/helpers.hpp"

namespace relpos::test {

// A position factory from (type, options) pairs, e.g. {{"shaw", {{"k", "2"}}}}.
template <class T>
nn::PositionFactory<T> positions(std::vector<std::pair<std::string, std::map<std::string, std::string>>> specs) {
    return [specs](const nn::PositionContext& ctx) {
        std::vector<std::shared_ptr<nn::PositionEncoding<T>>> out;
        for (auto& [type, opts] : specs) {
            nn::MapOptions o(opts, "model.position");
            out.push_back(nn::make_position<T>(type, o, ctx));
        }
        return out;
    };
}

inline nn::TransformerConfig tiny_config(std::size_t vocab = 11) {
    nn::TransformerConfig c;
    c.src_vocab = c.tgt_vocab = vocab;
    c.dims.d_model = 8;
    c.dims.heads = 2;
    c.dims.d_ff = 12;
    c.dims.dropout = 0.1;
    c.dims.attention_dropout = 0.1;
    c.encoder_layers = 1;
    c.decoder_layers = 1;
    c.seed = 3;
    return c;
}

using PositionSpecs = std::vector<std::pair<std::string, std::map<std::string, std::string>>>;

// Decoding one token at a time through the KV caches gives the logits of decoding the whole target
// at once (double, 1e-12), and beam reordering keeps rows consistent.
inline void incremental_equals_full(const PositionSpecs& spec, nn::NormOrder order = nn::NormOrder::Post) {
    auto cfg = tiny_config(13);
    cfg.decoder_layers = 2;
    cfg.dims.norm = order;
    nn::Transformer<double> model(cfg, positions<double>(spec));
    model.eval();
    NoGradGuard ng;
    const std::size_t B = 2, Ls = 4, Lt = 6;
    std::vector<std::int32_t> src = {4, 5, 6, 7, 8, 9, 0, 0};
    std::vector<std::int32_t> tgt = {2, 4, 5, 6, 7, 8, 2, 9, 10, 11, 12, 4};
    auto smask = model.padding_mask(src, B, Ls);
    Var<double> mem = model.encode(src, B, Ls, smask);
    Array<double> full = model.decode(tgt, B, Lt, mem, smask).value();  // (B, Lt, V)
    auto state = model.start_decoding(mem, smask);
    for (std::size_t t = 0; t < Lt; ++t) {
        std::vector<std::int32_t> tok = {tgt[t], tgt[Lt + t]};
        Array<double> step = model.decode_step(tok, state).value();  // (B, V)
        for (std::size_t b = 0; b < B; ++b)
            for (std::size_t v = 0; v < cfg.tgt_vocab; ++v) {
                INFO("step " << t << " row " << b << " vocab " << v);
                REQUIRE(step(b, v) == Approx(full(b, t, v)).margin(1e-12));
            }
    }
    state.select({1, 1});
    Array<double> again = model.decode_step({5, 5}, state).value();
    for (std::size_t v = 0; v < cfg.tgt_vocab; ++v) REQUIRE(again(0, v) == again(1, v));
}

}  // namespace relpos::test
