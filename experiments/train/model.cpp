#include "experiments/train/model.hpp"

#include <fmt/format.h>

#include "experiments/data/example.hpp"
#include "experiments/util/system.hpp"
#include "nn/position.hpp"

namespace relpos {

nn::Family model_family(const ModelConfig& m) {
    if (m.family == "decoder_only") return nn::Family::DecoderOnly;
    if (m.family == "encoder_only") return nn::Family::EncoderOnly;
    return nn::Family::EncoderDecoder;
}

namespace {

// A model that cannot fit in memory is a config error, reported before any allocation (an absurd
// d_model would otherwise end in std::bad_alloc, an OOM kill, or a size_t overflow inside xtensor).
void check_model_fits(const ExperimentConfig& cfg, std::size_t vocab) {
    const auto& m = cfg.model;
    const double params = model_parameters(m, double(vocab)), need = training_bytes(params);
    const bool decoder_only = m.family == "decoder_only", encoder_only = m.family == "encoder_only";
    const double have = physical_memory_bytes();
    if (need <= have) return;
    // the keys that make the model smaller (read_model refused the layers alone; here the vocabulary counts)
    const std::string keys = decoder_only   ? "model.decoder_layers"
                             : encoder_only ? "model.encoder_layers"
                                            : "model.encoder_layers, model.decoder_layers";
    throw ConfigError(fmt::format(
        "{}: model: a model with d_model {}, d_ff {} and {} has at least {:.3g} parameters and needs at least {:.3g} "
        "GiB to train (weights, gradients and Adam's two moments), more than this machine's {:.0f} GiB; lower {}, "
        "model.d_model or model.d_ff",
        cfg.source, m.d_model, m.d_ff, describe_layers(m), params, need / (1 << 30), have / (1 << 30), keys));
}

}  // namespace

std::unique_ptr<nn::Transformer<float>> build_model(const ExperimentConfig& cfg, std::size_t vocab,
                                                    std::size_t longest_source, std::size_t longest_target) {
    check_model_fits(cfg, vocab);
    const auto& m = cfg.model;
    nn::TransformerConfig tc;
    tc.family = model_family(m);
    tc.src_vocab = tc.tgt_vocab = vocab;
    tc.dims.d_model = static_cast<std::size_t>(m.d_model);
    tc.dims.heads = static_cast<std::size_t>(m.heads);
    tc.dims.d_ff = static_cast<std::size_t>(m.d_ff);
    tc.dims.dropout = m.dropout;
    tc.dims.attention_dropout = m.attention_dropout;
    tc.dims.norm = m.norm == "pre" ? nn::NormOrder::Pre : nn::NormOrder::Post;
    tc.encoder_layers = static_cast<std::size_t>(m.encoder_layers);
    tc.decoder_layers = static_cast<std::size_t>(m.decoder_layers);
    tc.share_embeddings = m.share_embeddings;
    tc.scale_embeddings = m.scale_embeddings;
    tc.pad_id = PAD_ID;
    tc.seed = static_cast<std::uint64_t>(cfg.seed);
    const auto specs = m.position;
    auto factory = [specs](const nn::PositionContext& ctx) {
        std::vector<std::shared_ptr<nn::PositionEncoding<float>>> out;
        for (const auto& s : specs) {
            YamlOptions opts = s.options();
            try {
                out.push_back(nn::make_position<float>(s.type, opts, ctx));
            } catch (const nn::OptionError& e) {
                throw ConfigError(e.what());
            }
        }
        return out;
    };
    auto model = std::make_unique<nn::Transformer<float>>(tc, factory);
    auto check = [&](std::size_t limit, std::size_t need, const char* side) {
        if (need <= limit) return;
        const std::string what = fmt::format(
            "the learned position table holds {} positions but the longest {} in the data needs {}; raise max_len to at least {}",
            limit, side, need, need);
        for (const auto& s : specs)
            if (s.type == "learned") {
                try {
                    s.options().fail("max_len", what);  // names the file, line and key (or the override)
                } catch (const nn::OptionError& e) {
                    throw ConfigError(e.what());
                }
            }
        throw ConfigError(fmt::format("{}: model.position: {}", cfg.source, what));
    };
    if (longest_source) check(model->max_source_length(), longest_source, "source sequence");
    if (longest_target)
        check(model->max_target_length(), longest_target + 1,
              tc.family == nn::Family::DecoderOnly ? "sequence" : "target sequence (with BOS/EOS)");
    return model;
}

}  // namespace relpos
