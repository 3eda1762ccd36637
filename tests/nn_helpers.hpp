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

template <class T>
std::vector<Var<double>> params_of(const nn::Module<T>& m) {
    return m.parameters();
}

}  // namespace relpos::test
