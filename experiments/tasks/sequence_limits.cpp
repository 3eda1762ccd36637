#include "experiments/tasks/sequence_limits.hpp"

#include <algorithm>
#include <fstream>

#include <fmt/format.h>

#include "experiments/util/system.hpp"

namespace relpos {

namespace {

// The longest sequence one side of the model sees in `ex`: the encoder's input (source), the decoder's
// (BOS + target), or a decoder-only model's one input of |src| + |tgt| - 1 tokens.
std::size_t longest_input(const std::vector<Example>& ex, nn::Family family) {
    std::size_t n = 0;
    for (const auto& e : ex) {
        if (family == nn::Family::DecoderOnly) n = std::max(n, e.src.size() + e.tgt.size() - 1);
        else if (family == nn::Family::EncoderOnly) n = std::max(n, e.src.size());
        else n = std::max({n, e.src.size(), e.tgt.size()});
    }
    return n;
}

// Bytes this process may use: physical memory, or a control group's limit (cgroup v2 memory.max, v1
// memory.limit_in_bytes) when lower.
double memory_budget_bytes() {
    double have = physical_memory_bytes();
    for (const char* f : {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
        std::ifstream in(f);
        double limit = 0;
        if (in >> limit && limit > 0) have = std::min(have, limit);  // "max" reads as no number
    }
    return have;
}

double gib(double bytes) { return bytes / double(1 << 30); }

// The model's input for symbol sequences of `len`: a decoder-only or encoder-only input holds the prompt, the
// separator and the answer (about 2 x the length); an encoder-decoder's encoder reads the prompt alone.
double input_length(const ModelConfig& m, double len) { return m.family == "encoder_decoder" ? len : 2 * len + 3; }

}  // namespace

void check_memory_up_front(const ExperimentConfig& cfg, const std::vector<std::string>& overrides) {
    const double have = memory_budget_bytes();
    const auto& d = cfg.data;
    const TaskDataSchema* task = task_data_schema(d.task);
    const bool synthetic = task && !task->reads_dir;  // tasks that read no files generate their examples
    auto where = [&](const std::string& key) {
        for (auto it = overrides.rbegin(); it != overrides.rend(); ++it) {
            const auto eq = it->find('=');
            const std::string k = it->substr(0, eq);
            if (key_contains(k, key) || key_contains(key, k)) return fmt::format("command-line override '{}'", *it);
        }
        return cfg.source.empty() ? std::string("config") : cfg.source;
    };
    auto refuse = [&](const std::string& key, const std::string& what, const std::string& change) {
        throw ConfigError(fmt::format("{}: {}: {}, more than this machine's {:.1f} GiB of memory; {}", where(key), key,
                                      what, gib(have), change));
    };
    // Generating the examples: every token is held as ids of the source and target (4 bytes each) and as
    // text of the source and reference (about 4 bytes each, ids written as numbers): 16 bytes a token.
    constexpr double kBytesPerToken = 16;
    if (synthetic) {
        const auto& s = d.synthetic;
        auto mean = [](const LengthRange& r) { return (double(r.min) + double(r.max)) / 2; };
        const double train = double(s.train_size) * mean(s.train_len) * kBytesPerToken;
        const double valid = double(s.valid_size) * mean(s.train_len) * kBytesPerToken;
        const double test = double(s.test_size) * mean(s.test_len) * double(std::max<std::size_t>(d.test_splits.size(), 1)) *
                            kBytesPerToken;
        if (train + valid + test > have) {
            // Blame the split that needs the most, and in it the size or the length, whichever is larger.
            struct Part {
                double bytes;
                const char *size_key, *len_key;
                long size;
                const LengthRange& len;
            };
            const Part parts[] = {{train, "train_size", "train_len", s.train_size, s.train_len},
                                  {valid, "valid_size", "train_len", s.valid_size, s.train_len},
                                  {test, "test_size", "test_len", s.test_size, s.test_len}};
            const Part& big = *std::max_element(std::begin(parts), std::end(parts),
                                                [](const Part& a, const Part& b) { return a.bytes < b.bytes; });
            const bool size_blamed = double(big.size) > mean(big.len);
            const std::string key = std::string("data.synthetic.") + (size_blamed ? big.size_key : big.len_key);
            refuse(key,
                   fmt::format("generating the examples ({} training, {} validation, {} test of lengths up to {}) "
                               "needs about {:.3g} GiB",
                               s.train_size, s.valid_size, s.test_size, std::max(s.train_len.max, s.test_len.max),
                               gib(train + valid + test)),
                   size_blamed ? fmt::format("lower it ({})", big.size)
                               : fmt::format("lower its maximum ({}) or data.synthetic.{}", big.len.max, big.size_key));
        }
    }
    // Evaluating the longest sequence: scores and weights of one attention matrix per head, for a batch of
    // eval.batch_tokens tokens (at least the one sequence). An input of a decoder-only or encoder-only model
    // holds the source and the target (about twice the length).
    std::string key;
    double longest = 0;
    if (synthetic) {
        const bool test_longer = d.synthetic.test_len.max >= d.synthetic.train_len.max;
        key = test_longer ? "data.synthetic.test_len" : "data.synthetic.train_len";
        longest = input_length(cfg.model, double(std::max(d.synthetic.train_len.max, d.synthetic.test_len.max)));
    } else if (task_names_runs_by(d.task, "lm")) {
        key = "data.lm.eval_lengths";
        for (long n : d.lm.eval_lengths) longest = std::max(longest, double(n));
        if (double(d.lm.context) > longest) {
            key = "data.lm.context";
            longest = double(d.lm.context);
        }
    }
    if (longest > 0) {
        const double heads = double(std::max<long>(cfg.model.heads, 1));
        const double need = heads * longest * std::max(longest, double(cfg.eval.batch_tokens)) * sizeof(float) * 2;
        if (need > have)
            refuse(key,
                   fmt::format("evaluating sequences of up to {:.0f} tokens needs at least {:.3g} GiB for one layer's "
                               "attention ({} heads x {:.0f} x {:.0f} scores and weights)",
                               longest, gib(need), cfg.model.heads, longest, std::max(longest, double(cfg.eval.batch_tokens))),
                   longest > double(cfg.eval.batch_tokens) ? "lower its maximum"
                                                           : "lower its maximum or eval.batch_tokens");
    }
    // Training one batch: the activations the backward keeps. At least, in every layer, 4 d_model + d_ff floats a
    // token (the attention's input, queries, keys, values, the feed-forward's hidden layer) and one row of attention
    // weights per head over the longest training input, and for the output layer the logits and their gradient.
    // A batch holds up to train.batch_tokens tokens, and never more than the training set of a synthetic task.
    const auto& m = cfg.model;
    double train_len = 0, vocab = double(d.vocab_size), tokens = double(cfg.train.batch_tokens);
    if (synthetic) {
        train_len = input_length(m, double(d.synthetic.train_len.max));
        vocab = double(d.synthetic.n_symbols) + 8;  // the symbols and the specials
        tokens = std::min(tokens, double(d.synthetic.train_size) * train_len);
    } else if (task_names_runs_by(d.task, "lm")) {
        train_len = double(d.lm.context);
    } else {
        train_len = double(d.max_len);
    }
    const double layers = m.family == "decoder_only"   ? double(m.decoder_layers)
                          : m.family == "encoder_only" ? double(m.encoder_layers)
                                                       : double(m.encoder_layers + m.decoder_layers);
    const double per_token = layers * (4 * double(m.d_model) + double(m.d_ff) + double(m.heads) * train_len) + 2 * vocab;
    const double need = tokens * per_token * sizeof(float);
    if (need > have)
        refuse("train.batch_tokens",
               fmt::format("a training batch of up to {:.0f} tokens needs at least {:.3g} GiB for the activations the "
                           "backward keeps ({:.0f} layers of d_model {} and d_ff {}, {} heads over up to {:.0f} keys, "
                           "{:.0f} logits a token)",
                           tokens, gib(need), layers, m.d_model, m.d_ff, m.heads, train_len, vocab),
               fmt::format("lower it ({})", cfg.train.batch_tokens));
}

void check_randomized_ranges(const ExperimentConfig& cfg, const Dataset& data) {
    for (const auto& spec : cfg.model.position) {
        if (!spec.node.IsMap() || !spec.node["randomized"] || !spec.node["randomized"].IsScalar()) continue;
        long range = 0;
        try {
            range = std::stol(spec.node["randomized"].Scalar());
        } catch (const std::exception&) {
            continue;  // the encoding's own validation reports it
        }
        if (range <= 0) continue;
        const YAML::Node at_eval = spec.node["randomized_eval"];
        const bool draws_at_eval = at_eval && at_eval.IsScalar() && at_eval.Scalar() != "identity";
        // (split, its longest sequence): training first, then the splits positions are drawn for
        std::vector<std::pair<std::string, std::size_t>> need{{"train", longest_input(data.train, data.family)}};
        if (draws_at_eval) {
            for (const auto& [name, split] : data.splits) {
                std::size_t n = longest_input(split.examples, data.family);
                if (!split.stream.empty())  // a language model scores windows of each evaluation length
                    for (long len : cfg.data.lm.eval_lengths) n = std::max(n, static_cast<std::size_t>(len));
                need.emplace_back(name, n);
            }
        }
        for (const auto& [name, n] : need) {
            if (n <= static_cast<std::size_t>(range)) continue;
            YamlOptions o = spec.options();
            try {
                o.fail("randomized",
                       fmt::format("draws positions from [0, {}), but the longest {} sequence has {} tokens; set it to "
                                   "at least {}{}",
                                   range, name == "train" ? std::string("training") : "'" + name + "'", n, n,
                                   name == "train" ? "" : " (or randomized_eval: identity, which evaluates at 0, 1, 2, ...)"));
            } catch (const nn::OptionError& e) {
                throw ConfigError(e.what());
            }
        }
    }
}

}  // namespace relpos
