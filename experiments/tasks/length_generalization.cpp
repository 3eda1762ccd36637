// The algorithmic suite for length generalization (Kazemnejad et al. 2023; Ruoss et al. 2023): copy,
// reverse, sort, parity, addition, duplicate_string, ... (experiments/tasks/algorithmic.hpp has the
// generators), for two model families:
//   decoder_only  BOS prompt SEP answer EOS, trained on the answer and EOS; the answer is decoded greedily
//   encoder_only  BOS prompt SEP then one slot token per answer token and EOS (ALGO_SLOT_ID), every position
//                 seeing every other; the model fills the slots in one pass (the non-autoregressive setting
//                 of Ruoss et al. and Delétang et al., who also give the model the answer's length) Train on input lengths data.synthetic.train_len, validate on held-out examples of those
// lengths, test on data.synthetic.test_len (e.g. L+1 .. 2L), the same number of test examples per length.
//   accuracy          exact match of the answer, %: greedy decoding (prompt fed through the cache, answer
//                     ended by EOS), or the argmax of every slot
//   accuracy@n        the same for inputs of length n
//   token_accuracy    per-token accuracy, % (Ruoss et al.'s metric): of all answer tokens (EOS not counted),
//                     the share predicted right at their position; a decoded answer that stops early or
//                     runs long is scored against the reference position by position (missing = wrong)
//   token_accuracy@n  the same for inputs of length n
//   extension_ratio   the longest n such that every evaluated length <= n (the validation lengths and the
//                     split's) has accuracy >= 90%, divided by L = train_len max; 0 when the shortest fails
//   loss, ppl         teacher-forced, on the answer tokens
#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "experiments/eval/decode.hpp"
#include "experiments/tasks/synthetic.hpp"
#include "experiments/tasks/algorithmic.hpp"
#include "experiments/tasks/task.hpp"
#include "experiments/train/trainer.hpp"

namespace relpos {

namespace {

// The data.synthetic options, as the sequence-to-sequence copy task documents them.
std::vector<TaskOption> task_registry_options_of_copy(const TaskRegistry& r) {
    const TaskEntry* copy = r.find("copy");
    return copy ? copy->options : std::vector<TaskOption>{};
}

constexpr std::uint64_t ALGO_DATA_SEED = 20230531;  // data stays fixed across model seeds
// The encoder-only slot token: UNK, which the generators never emit (so the vocabulary, and the
// decoder-only models' parameters, stay as they were).
constexpr std::int32_t ALGO_SLOT_ID = UNK_ID;

// Both metrics of a split, whole answers and tokens, overall and per input length (%).
struct Accuracy {
    double exact = 0, token = 0;
    std::map<std::size_t, double> exact_at, token_at;
};

// Exact matches and right tokens counted per input length.
class LengthTally {
public:
    // One example: its input length, whether the whole answer was right, how many of its answer tokens
    // were right, of how many.
    void add(std::size_t length, bool exact, std::size_t right_tokens, std::size_t tokens) {
        auto& c = counts_[length];
        c.exact += exact;
        c.examples += 1;
        c.right_tokens += right_tokens;
        c.tokens += tokens;
    }
    Accuracy percent() const {
        Accuracy a;
        std::size_t exact = 0, examples = 0, right = 0, tokens = 0;
        auto pct = [](std::size_t n, std::size_t d) { return d == 0 ? 0.0 : 100.0 * double(n) / double(d); };
        for (auto& [n, c] : counts_) {
            a.exact_at[n] = pct(c.exact, c.examples);
            a.token_at[n] = pct(c.right_tokens, c.tokens);
            exact += c.exact, examples += c.examples, right += c.right_tokens, tokens += c.tokens;
        }
        a.exact = pct(exact, examples);
        a.token = pct(right, tokens);
        return a;
    }

private:
    struct Counts {
        std::size_t exact = 0, examples = 0, right_tokens = 0, tokens = 0;
    };
    std::map<std::size_t, Counts> counts_;  // by input length
};

// The encoder-only form of a (BOS prompt SEP, answer EOS) example: the input gets one slot per label.
Example to_encoder_only(Example e) {
    e.src.insert(e.src.end(), e.tgt.size(), ALGO_SLOT_ID);
    return e;
}

// Both accuracies of a split for an encoder-only model: one forward pass per batch, the argmax at every
// slot. The answer is exactly right when every slot is, EOS's included; tokens are the answer's, without EOS.
Accuracy slot_accuracy(const nn::Transformer<float>& model, const EvalSplit& s, std::size_t batch_tokens) {
    NoGradGuard ng;
    LengthTally tally;
    BatchOptions bo;
    bo.max_tokens = batch_tokens;
    bo.layout = Layout::EncoderOnly;
    bo.one_length = model.eval_batches_by_length();
    for (const Batch& b : eval_batches(s.examples, bo)) {
        Var<float> logits = model.forward_bidirectional(b.tgt_in, b.B, b.Lt);  // (B, Lt, V)
        const std::size_t V = logits.shape().back();
        const float* p = logits.data();
        for (std::size_t r = 0; r < b.B; ++r) {
            std::size_t right = 0, tokens = 0;
            bool eos_ok = true;
            for (std::size_t t = 0; t < b.Lt; ++t) {
                const std::int32_t want = b.tgt_out[r * b.Lt + t];
                if (want == PAD_ID) continue;
                const float* row = p + (r * b.Lt + t) * V;
                const bool ok = std::max_element(row, row + V) - row == want;
                if (want == EOS_ID) {
                    eos_ok = ok;
                } else {
                    right += ok;
                    ++tokens;
                }
            }
            tally.add(s.lengths[b.index[r]], eos_ok && right == tokens, right, tokens);
        }
    }
    return tally.percent();
}

// Both accuracies of a split for a decoder-only model: greedy decoding, the answer ended by EOS.
Accuracy decoded_accuracy(const nn::Transformer<float>& model, const EvalSplit& s, std::size_t batch_tokens) {
    LengthTally tally;
    // Batches of similar total length, within the token budget.
    std::vector<std::size_t> order(s.examples.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return s.examples[a].src.size() + s.examples[a].tgt.size() < s.examples[b].src.size() + s.examples[b].tgt.size();
    });
    std::size_t at = 0;
    while (at < order.size()) {
        const Example& last = s.examples[order[at]];
        const std::size_t len = last.src.size() + last.tgt.size();
        std::size_t rows = std::max<std::size_t>(1, batch_tokens / std::max<std::size_t>(len, 1));
        std::vector<std::vector<std::int32_t>> prompts;
        std::vector<std::size_t> idx;
        std::size_t max_answer = 0;
        for (; at < order.size() && prompts.size() < rows; ++at) {
            prompts.push_back(s.examples[order[at]].src);
            idx.push_back(order[at]);
            max_answer = std::max(max_answer, s.examples[order[at]].tgt.size());
        }
        const auto out = continue_greedy(model, prompts, max_answer, EOS_ID);
        for (std::size_t k = 0; k < idx.size(); ++k) {
            const Example& e = s.examples[idx[k]];
            // The target ends with EOS; the continuation stops at EOS and does not return it. Tokens are
            // compared position by position; an answer of the wrong length is not exactly right.
            const std::size_t answer = e.tgt.size() - 1;
            std::size_t right = 0;
            for (std::size_t t = 0; t < std::min(answer, out[k].size()); ++t) right += out[k][t] == e.tgt[t];
            tally.add(s.lengths[idx[k]], out[k].size() == answer && right == answer, right, answer);
        }
    }
    return tally.percent();
}

class AlgorithmicTask : public Task {
public:
    AlgorithmicTask(std::string name, nn::Family family) : name_(std::move(name)), family_(family) {}

    Dataset load(const ExperimentConfig& cfg, const std::string&, const Log& log) const override {
        const auto& dc = cfg.data;
        const auto& s = dc.synthetic;
        const std::size_t ns = static_cast<std::size_t>(s.n_symbols);
        auto located = [&](auto&& f) { return relpos::located(cfg, "data.synthetic", f); };
        Dataset d;
        d.valid_split = dc.valid_split;
        d.synthetic = true;
        d.vocab = located([&] { return algorithmic_vocab_size(name_, ns); });
        d.train = located([&] { return generate_algorithmic(name_, s.train_size, s.train_len.min, s.train_len.max, ns, ALGO_DATA_SEED); });
        // Evaluation splits: the same number of examples at every length of the range, so each accuracy@n
        // has the same weight and the same sampling error.
        auto make_split = [&](std::size_t n, const LengthRange& r, std::uint64_t seed) {
            EvalSplit e;
            const std::size_t lengths = static_cast<std::size_t>(r.max - r.min + 1);
            const std::size_t per = std::max<std::size_t>(1, (n + lengths - 1) / lengths);
            for (long len = r.min; len <= r.max; ++len) {
                auto ex = located([&] { return generate_algorithmic(name_, per, len, len, ns, seed + static_cast<std::uint64_t>(len)); });
                for (auto& x : ex) {
                    e.examples.push_back(std::move(x));
                    e.lengths.push_back(static_cast<std::size_t>(len));
                }
            }
            return e;
        };
        std::set<std::string> wanted(cfg.eval.splits.begin(), cfg.eval.splits.end());
        wanted.insert(dc.valid_split);
        d.splits[dc.valid_split] = make_split(s.valid_size, s.train_len, ALGO_DATA_SEED + 1000);
        for (const auto& name : wanted)
            if (name != dc.valid_split && name != "train") d.splits[name] = make_split(s.test_size, s.test_len, ALGO_DATA_SEED + 2000);
        if (family_ == nn::Family::EncoderOnly) {
            for (auto& e : d.train) e = to_encoder_only(std::move(e));
            for (auto& [n, split] : d.splits)
                for (auto& e : split.examples) e = to_encoder_only(std::move(e));
        }
        if (log)
            log(fmt::format("{} ({}): {} training examples (lengths {}-{}), vocabulary {}", name_,
                            family_ == nn::Family::EncoderOnly ? "encoder-only" : "decoder-only", d.train.size(),
                            s.train_len.min, s.train_len.max, d.vocab));
        return d;
    }

    std::map<std::string, double> evaluate(const EvalRequest& r) const override {
        const auto& metrics = r.cfg.eval.metrics_for(r.split);
        auto wants = [&](const char* m) { return std::find(metrics.begin(), metrics.end(), m) != metrics.end(); };
        const std::size_t bt = static_cast<std::size_t>(r.cfg.eval.batch_tokens);
        const EvalSplit& split = r.data.splits.at(r.split);
        std::map<std::string, double> out;
        if (wants("loss") || wants("ppl")) {
            const EvalLoss el = evaluate_loss(r.model, split.examples, bt);
            if (wants("loss")) out["loss"] = el.loss;
            if (wants("ppl")) out["ppl"] = el.ppl;
        }
        if (wants("accuracy") || wants("token_accuracy") || wants("extension_ratio")) {
            const Accuracy acc = accuracy(r.model, split, bt);
            if (wants("accuracy")) {
                out["accuracy"] = acc.exact;
                for (auto& [n, a] : acc.exact_at) out[fmt::format("accuracy@{}", n)] = a;
            }
            if (wants("token_accuracy")) {
                out["token_accuracy"] = acc.token;
                for (auto& [n, a] : acc.token_at) out[fmt::format("token_accuracy@{}", n)] = a;
            }
            if (wants("extension_ratio")) {
                std::map<std::size_t, double> all = acc.exact_at;
                if (r.split != r.data.valid_split)
                    for (auto& [n, a] : accuracy(r.model, r.data.splits.at(r.data.valid_split), bt).exact_at)
                        all.emplace(n, a);
                std::size_t reach = 0;
                for (auto& [n, a] : all) {
                    if (a < 90.0) break;
                    reach = n;
                }
                out["extension_ratio"] = double(reach) / double(r.cfg.data.synthetic.train_len.max);
            }
        }
        return out;
    }

    // With a competence target: both accuracies of the validation split (in distribution), named as in
    // results.json (<valid_split>.accuracy; the validation line's own valid_accuracy is teacher-forced).
    std::vector<std::pair<std::string, double>> validation_metrics(const nn::Transformer<float>& model,
                                                                   const Dataset& data,
                                                                   const ExperimentConfig& cfg) const override {
        if (cfg.train.target_metric.empty()) return {};
        const Accuracy a = accuracy(model, data.splits.at(data.valid_split), static_cast<std::size_t>(cfg.eval.batch_tokens));
        return {{data.valid_split + ".accuracy", a.exact}, {data.valid_split + ".token_accuracy", a.token}};
    }

private:
    Accuracy accuracy(const nn::Transformer<float>& model, const EvalSplit& s, std::size_t batch_tokens) const {
        return family_ == nn::Family::EncoderOnly ? slot_accuracy(model, s, batch_tokens)
                                                  : decoded_accuracy(model, s, batch_tokens);
    }

    std::string name_;
    nn::Family family_;
};

}  // namespace

void register_algorithmic(TaskRegistry& r) {
    const std::vector<std::string> metrics{"accuracy", "token_accuracy", "extension_ratio", "loss", "ppl"};
    const std::vector<std::string> targets{"accuracy", "token_accuracy"};
    for (const auto& t : algorithmic_tasks()) {
        const std::string name = t.name;
        auto make_algo = [name](nn::Family f) -> std::unique_ptr<Task> { return std::make_unique<AlgorithmicTask>(name, f); };
        if (const TaskEntry* old = r.find(name)) {
            // A sequence-to-sequence task of the same name (copy, reverse): one entry, three families.
            TaskEntry e = *old;
            for (auto f : {nn::Family::DecoderOnly, nn::Family::EncoderOnly}) {
                e.families.push_back(f);
                e.metrics[f] = metrics;
                e.target_metrics[f] = targets;
                e.data.default_metrics[nn::family_name(f)] = {"accuracy", "extension_ratio"};
            }
            e.summary += fmt::format("; decoder_only, encoder_only: {}", t.summary);
            auto seq2seq = old->make;
            e.make = [seq2seq, make_algo](nn::Family f) {
                return f == nn::Family::EncoderDecoder ? seq2seq(f) : make_algo(f);
            };
            r.replace(std::move(e));
            continue;
        }
        TaskEntry e;
        e.name = name;
        e.summary = t.summary;
        e.families = {nn::Family::DecoderOnly, nn::Family::EncoderOnly};
        e.metrics = {{nn::Family::DecoderOnly, metrics}, {nn::Family::EncoderOnly, metrics}};
        e.target_metrics = {{nn::Family::DecoderOnly, targets}, {nn::Family::EncoderOnly, targets}};
        e.options = task_registry_options_of_copy(r);  // data.synthetic: n_symbols, sizes, train_len, test_len
        e.data.default_metrics = {{"decoder_only", {"accuracy", "extension_ratio"}},
                                  {"encoder_only", {"accuracy", "extension_ratio"}}};
        e.make = make_algo;
        r.add(std::move(e));
    }
}

}  // namespace relpos
