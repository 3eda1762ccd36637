// What the encoder-decoder tasks share (Seq2SeqTask: decode every split with beam search and score the
// hypotheses with BLEU and exact-match metrics; translate_split, score_split), and the synthetic
// sequence-to-sequence tasks (experiments/tasks/synthetic.hpp). Translation of a corpus: multi30k.cpp.
#include <algorithm>
#include <unistd.h>

#include <filesystem>
#include <set>

#include <fmt/format.h>

#include "experiments/data/batching.hpp"
#include "experiments/eval/bleu.hpp"
#include "experiments/eval/scoring.hpp"
#include "experiments/tasks/seq2seq.hpp"
#include "experiments/train/trainer.hpp"
#include "experiments/util/system.hpp"
#include "experiments/tasks/synthetic.hpp"
#include "experiments/tasks/task.hpp"

namespace relpos {

namespace {

// ---------------------------------------------------------------- synthetic seq2seq

constexpr std::uint64_t SYNTHETIC_DATA_SEED = 20180306;  // data stays fixed across model seeds

class SyntheticSeq2SeqTask : public Seq2SeqTask {
public:
    Dataset load(const ExperimentConfig& cfg, const std::string&, const Log& log) const override {
        Dataset d;
        const auto& dc = cfg.data;
        d.valid_split = dc.valid_split;
        d.synthetic = true;
        check_fits(cfg);
        const auto& s = dc.synthetic;
        const std::size_t ns = static_cast<std::size_t>(s.n_symbols);
        // The generator's own limits (e.g. n_symbols) are reported against the config that set them.
        auto located = [&](auto&& f) { return relpos::located(cfg, "data.synthetic", f); };
        d.vocab = synthetic_vocab_size(ns);
        d.train = located([&] { return generate(dc.task, s.train_size, s.train_len.min, s.train_len.max, ns, SYNTHETIC_DATA_SEED); });
        auto make_split = [&](std::size_t n, const LengthRange& r, std::uint64_t seed) {
            EvalSplit e;
            e.examples = located([&] { return generate(dc.task, n, r.min, r.max, ns, seed); });
            for (auto& ex : e.examples) {
                e.sources.push_back(format_ids(ex.src));
                e.refs.push_back(format_ids(ex.tgt));
            }
            e.refs_raw = e.refs;
            return e;
        };
        // "val": held-out examples of the training lengths; any other split: the longer test lengths.
        d.splits[dc.valid_split] = make_split(s.valid_size, s.train_len, SYNTHETIC_DATA_SEED + 1);
        for (const auto& name : wanted_splits(cfg))
            if (name != dc.valid_split && name != "train") d.splits[name] = make_split(s.test_size, s.test_len, SYNTHETIC_DATA_SEED + 2);
        if (log)
            log(fmt::format("synthetic task {}: {} training examples (lengths {}-{}), vocabulary {}", dc.task,
                            d.train.size(), s.train_len.min, s.train_len.max, d.vocab));
        return d;
    }

private:
    // Synthetic sizes that cannot fit in memory are config errors, found before generating anything.
    static void check_fits(const ExperimentConfig& cfg) {
        const auto& s = cfg.data.synthetic;
        // an example: two vectors of int32 ids (source, target) plus their headers
        auto bytes = [](long n, const LengthRange& r) { return double(n) * (2.0 * 4.0 * double(r.max) + 64.0); };
        const double need = bytes(s.train_size, s.train_len) + bytes(s.valid_size, s.train_len) + bytes(s.test_size, s.test_len);
        const double have = physical_memory_bytes();
        if (need <= have / 2) return;
        const char* key = bytes(s.train_size, s.train_len) >= bytes(s.test_size, s.test_len) ? "train_size" : "test_size";
        throw ConfigError(fmt::format("{}: data.synthetic.{}: the synthetic examples would need about {:.3g} GiB, more "
                                      "than half of this machine's {:.0f} GiB; use fewer or shorter examples",
                                      cfg.source, key, need / (1 << 30), have / (1 << 30)));
    }
};

}  // namespace

const std::vector<std::string> kSeq2SeqMetrics{"bleu", "bleu_tok", "loss", "ppl", "accuracy", "token_accuracy"};

std::map<std::string, double> Seq2SeqTask::evaluate(const EvalRequest& req) const {
    // The split's own metrics (eval.split_metrics) in a copy of the config, which the scoring below reads.
    const bool own_metrics = req.cfg.eval.split_metrics.count(req.split) > 0;
    ExperimentConfig own;
    if (own_metrics) {
        own = req.cfg;
        own.eval.metrics = req.cfg.eval.metrics_for(req.split);
    }
    const EvalRequest r{req.model, req.data, req.split, own_metrics ? own : req.cfg, req.run_dir, req.signatures, req.log};
    const auto& es = r.data.splits.at(r.split);
    const DecodeOptions dopt = decode_options(r.cfg.eval);
    // loss and ppl are teacher-forced: a split asked for nothing else is not decoded (no hyp file)
    const bool decode = std::any_of(r.cfg.eval.metrics.begin(), r.cfg.eval.metrics.end(),
                                    [](const std::string& m) { return m != "loss" && m != "ppl"; });
    if (!decode) {
        if (r.log) r.log(fmt::format("scoring {} ({} sentences; loss only, nothing to decode)", r.split, es.examples.size()));
        return score_split(r.model, r.data, es, {}, r.cfg, r.signatures);
    }
    if (r.log)
        r.log(fmt::format("decoding {} ({} sentences, beam {}, alpha {})", r.split, es.examples.size(), dopt.beam,
                          dopt.alpha));
    auto hyps = translate_split(r.model, r.data, es.examples, dopt, static_cast<std::size_t>(r.cfg.eval.batch_tokens));
    write_lines((std::filesystem::path(r.run_dir) / fmt::format("hyp.{}.txt", r.split)).string(), hyps);
    return score_split(r.model, r.data, es, hyps, r.cfg, r.signatures);
}

std::vector<std::pair<std::string, double>> Seq2SeqTask::validation_metrics(const nn::Transformer<float>& model,
                                                                           const Dataset& data,
                                                                           const ExperimentConfig& cfg) const {
    if (!cfg.train.valid_bleu) return {};
    // Greedy decoding of the validation split: the learning curve in BLEU (the final figures still come
    // from the best checkpoint with the configured beam).
    const EvalSplit& vs = data.splits.at(data.valid_split);
    auto hyps = translate_split(model, data, vs.examples, decode_options(cfg.eval, 1),
                                static_cast<std::size_t>(cfg.eval.batch_tokens));
    return {{"valid_bleu_tok", score_bleu("bleu_tok", hyps, vs.refs, false).score}};
}

std::set<std::string> wanted_splits(const ExperimentConfig& cfg) {
    std::set<std::string> wanted(cfg.eval.splits.begin(), cfg.eval.splits.end());
    wanted.insert(cfg.data.valid_split);
    return wanted;
}

std::vector<std::string> translate_split(const nn::Transformer<float>& model, const Dataset& data,
                                         const std::vector<Example>& examples, const DecodeOptions& opt,
                                         std::size_t batch_tokens) {
    std::vector<std::string> hyps(examples.size());
    BatchOptions bo;
    bo.max_tokens = batch_tokens;
    bo.one_length = model.eval_batches_by_length();
    for (const Batch& b : eval_batches(examples, bo)) {
        auto out = translate_batch(model, b.src, b.B, b.Ls, b.src_len, opt);
        for (std::size_t i = 0; i < b.B; ++i) hyps[b.index[i]] = data.detokenize(out[i]);
    }
    return hyps;
}

std::map<std::string, double> score_split(const nn::Transformer<float>& model, const Dataset& data,
                                          const EvalSplit& split, const std::vector<std::string>& hyps,
                                          const ExperimentConfig& cfg, std::map<std::string, std::string>* sigs) {
    std::map<std::string, double> m;
    std::optional<EvalLoss> el;
    for (const auto& name : cfg.eval.metrics) {
        if (is_bleu_metric(name)) {
            // bleu_tok against the references as trained on, bleu against the raw ones (eval/scoring.hpp).
            const bool tokenized_text = cfg.data.tokenized && !data.synthetic;
            auto r = score_bleu(name, hyps, name == "bleu_tok" ? split.refs : split.refs_raw, tokenized_text);
            m[name] = r.score;
            if (sigs) (*sigs)[name] = r.signature;
        } else if (name == "loss" || name == "ppl") {
            if (!el) el = evaluate_loss(model, split.examples, static_cast<std::size_t>(cfg.eval.batch_tokens));
            m[name] = name == "loss" ? el->loss : el->ppl;
        } else if (name == "accuracy") {  // exact match of whole output sequences
            std::size_t ok = 0;
            for (std::size_t i = 0; i < hyps.size(); ++i) ok += hyps[i] == split.refs[i];
            m[name] = hyps.empty() ? 0.0 : 100.0 * double(ok) / double(hyps.size());
        } else if (name == "token_accuracy") {
            m[name] = token_accuracy(hyps, split.refs);
        }
    }
    return m;
}

void register_synthetic_seq2seq(TaskRegistry& r) {
    for (const auto& t : synthetic_tasks()) {
        TaskEntry e;
        e.name = t.name;
        e.summary = t.summary;
        e.families = {nn::Family::EncoderDecoder};
        e.metrics = {{nn::Family::EncoderDecoder, kSeq2SeqMetrics}};
        for (auto o : t.options) {  // they live under data.synthetic
            o.key = "synthetic." + o.key;
            e.options.push_back(o);
        }
        e.data.default_metrics = {{"encoder_decoder", {"bleu_tok", "bleu"}}};
        e.id_vocab = [](const ExperimentConfig& cfg) {
            return synthetic_vocab_size(static_cast<std::size_t>(cfg.data.synthetic.n_symbols));
        };
        e.make = [](nn::Family) { return std::make_unique<SyntheticSeq2SeqTask>(); };
        r.add(std::move(e));
    }
}

}  // namespace relpos
