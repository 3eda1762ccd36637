// A config's data through its task, and the checks every task's data must pass.
#include <algorithm>

#include <fmt/format.h>

#include "experiments/tasks/synthetic.hpp"  // format_ids
#include "experiments/eval/decode.hpp"
#include "experiments/tasks/task.hpp"

namespace relpos {

std::string Dataset::detokenize(const std::vector<std::int32_t>& ids) const {
    if (subword) return subword->decode(ids);
    return format_ids(ids);
}

Dataset load_dataset(const ExperimentConfig& cfg, const std::string& cache_dir,
                     const std::function<void(const std::string&)>& log) {
    const auto& dc = cfg.data;
    Dataset d = make_task(cfg)->load(cfg, cache_dir, log);
    d.family = model_family(cfg.model);
    const bool decoder_only = d.family == nn::Family::DecoderOnly;
    const bool encoder_only = d.family == nn::Family::EncoderOnly;
    auto longest = [&](const std::vector<Example>& ex) {
        for (auto& e : ex) {
            if (decoder_only) {  // one input of |src| + |tgt| - 1 tokens; build_model adds 1 to longest_target
                d.longest_target = std::max(d.longest_target, e.src.size() + e.tgt.size() - 2);
                continue;
            }
            if (encoder_only) {  // one input of |src| tokens, all in the encoder
                d.longest_source = std::max(d.longest_source, e.src.size());
                continue;
            }
            d.longest_source = std::max(d.longest_source, e.src.size());
            d.longest_target = std::max(d.longest_target, e.tgt.size() + 1);
        }
    };
    if (d.longest_source == 0 && d.longest_target == 0) {
        longest(d.train);
        for (auto& [n, s] : d.splits) longest(s.examples);
    }
    if (d.train.empty() && cfg.train.epochs > 0)
        throw ConfigError(fmt::format("{}: no training examples are left (data.max_len is {}: every pair is longer, or "
                                      "data.max_train_examples / the data are empty); raise data.max_len",
                                      cfg.source, dc.max_len));
    // An empty reference line would pass training and fail at scoring (BLEU rejects empty references):
    // found here, before any work.
    for (const auto& [name, s] : d.splits)
        for (std::size_t i = 0; i < s.refs.size(); ++i)
            if (s.refs[i].find_first_not_of(" \t\r") == std::string::npos)
                throw DataError(fmt::format("{}: split '{}' has an empty reference on line {}: BLEU needs a reference "
                                            "for every sentence; fix the file or leave the split out of eval.splits",
                                            cfg.source, name, i + 1));
    // A source the run would decode must be within the bound eval and translate apply (a 5,000-token line
    // took 2.8 GB and 86 s): found here, before any work, not after training.
    if (d.family == nn::Family::EncoderDecoder)
        for (const auto& [name, s] : d.splits)
            for (std::size_t i = 0; i < s.examples.size(); ++i)
                if (s.examples[i].src.size() > kMaxDecodeSourceTokens)
                    throw DataError(fmt::format("{}: split '{}' line {} has a source of {} tokens; relpos decodes sources "
                                                "of at most {} tokens (as eval and translate); split or remove the line, or "
                                                "leave the split out of eval.splits",
                                                cfg.source, name, i + 1, s.examples[i].src.size(), kMaxDecodeSourceTokens));
    return d;
}

}  // namespace relpos
