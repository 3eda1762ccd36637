#include "experiments/eval/decode.hpp"
#include "experiments/data/example.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

namespace relpos {

double length_penalty(std::size_t length, double alpha) {
    return std::pow((5.0 + double(length)) / 6.0, alpha);
}

namespace {

// Row-wise log-softmax of logits (rows, V) into out.
void log_softmax_rows(const float* x, std::size_t rows, std::size_t V, std::vector<float>& out) {
    out.resize(rows * V);
    for (std::size_t r = 0; r < rows; ++r) {
        const float* xr = x + r * V;
        float mx = *std::max_element(xr, xr + V);
        double s = 0;
        for (std::size_t j = 0; j < V; ++j) s += std::exp(double(xr[j] - mx));
        const float lse = mx + float(std::log(s));
        for (std::size_t j = 0; j < V; ++j) out[r * V + j] = xr[j] - lse;
    }
}

std::size_t max_output_len(const DecodeOptions& o, std::size_t src_len) {
    return static_cast<std::size_t>(o.max_len_a * double(src_len)) + o.max_len_b;
}

}  // namespace

std::vector<std::vector<std::int32_t>> translate_batch(const nn::Transformer<float>& model,
                                                       const std::vector<std::int32_t>& src, std::size_t B,
                                                       std::size_t Ls, const std::vector<std::size_t>& src_len,
                                                       const DecodeOptions& opt) {
    NoGradGuard no_grad;
    auto mask = model.padding_mask(src, B, Ls);
    Var<float> memory = model.encode(src, B, Ls, mask);
    const std::size_t V = model.config().tgt_vocab;
    const std::size_t model_limit = model.max_target_length();  // learned positions cap the length
    std::vector<std::size_t> limit(B);
    for (std::size_t b = 0; b < B; ++b)
        limit[b] = std::max<std::size_t>(1, std::min(max_output_len(opt, src_len[b]), model_limit - 1));
    std::vector<std::vector<std::int32_t>> result(B);
    std::vector<float> logp;

    // Tokens a decode feeds at most: BOS and limit - 1 outputs (randomized_eval: sample draws that many positions).
    const std::size_t max_fed = *std::max_element(limit.begin(), limit.end());
    if (opt.beam <= 1) {  // greedy
        auto state = model.start_decoding(memory, mask, max_fed);
        std::vector<std::size_t> alive(B);
        std::iota(alive.begin(), alive.end(), 0);
        std::vector<std::int32_t> tokens(B, opt.bos);
        while (!alive.empty()) {
            Var<float> logits = model.decode_step(tokens, state);  // (alive, V)
            const float* p = logits.data();
            std::vector<std::size_t> keep_rows, next_alive;
            std::vector<std::int32_t> next_tokens;
            for (std::size_t r = 0; r < alive.size(); ++r) {
                const std::size_t b = alive[r];
                const std::int32_t best = static_cast<std::int32_t>(std::max_element(p + r * V, p + (r + 1) * V) - (p + r * V));
                if (best == opt.eos) continue;
                result[b].push_back(best);
                if (result[b].size() >= limit[b]) continue;
                keep_rows.push_back(r);
                next_alive.push_back(b);
                next_tokens.push_back(best);
            }
            if (next_alive.size() != alive.size() && !next_alive.empty()) state.select(keep_rows);
            alive = std::move(next_alive);
            tokens = std::move(next_tokens);
        }
        return result;
    }

    // ---- beam search: rows = (active sentences) x K, reordered every step.
    const std::size_t K = opt.beam;
    struct Hyp {
        std::vector<std::int32_t> tokens;
        double score = 0;  // sum of log-probabilities
    };
    struct Finished {
        std::vector<std::int32_t> tokens;
        double norm;  // score / lp
    };
    std::vector<std::vector<Hyp>> beams(B, std::vector<Hyp>(1));  // start: one empty hypothesis each
    std::vector<std::vector<Finished>> done(B);
    std::vector<std::size_t> active(B);
    std::iota(active.begin(), active.end(), 0);
    // initial state: one row per sentence
    auto state = model.start_decoding(memory, mask, max_fed);
    std::vector<std::int32_t> tokens(B, opt.bos);
    for (std::size_t step = 0; !active.empty(); ++step) {
        Var<float> logits = model.decode_step(tokens, state);  // (rows, V)
        const std::size_t rows = logits.dim(0);
        log_softmax_rows(logits.data(), rows, V, logp);
        std::vector<std::size_t> next_rows;
        std::vector<std::int32_t> next_tokens;
        std::vector<std::size_t> next_active;
        std::size_t row0 = 0;
        for (std::size_t b : active) {
            auto& hs = beams[b];
            const std::size_t nb = hs.size();
            // candidates: the 2K best extensions over all beams of this sentence
            std::vector<std::tuple<double, std::size_t, std::int32_t>> cand;  // (score, beam, token)
            for (std::size_t h = 0; h < nb; ++h) {
                const float* lp = logp.data() + (row0 + h) * V;
                std::vector<std::int32_t> idx(V);
                std::iota(idx.begin(), idx.end(), 0);
                const std::size_t top = std::min<std::size_t>(2 * K, V);
                std::partial_sort(idx.begin(), idx.begin() + top, idx.end(),
                                  [&](std::int32_t a, std::int32_t c) { return lp[a] > lp[c] || (lp[a] == lp[c] && a < c); });
                for (std::size_t t = 0; t < top; ++t) cand.emplace_back(hs[h].score + lp[idx[t]], h, idx[t]);
            }
            std::stable_sort(cand.begin(), cand.end(), [](auto& x, auto& y) { return std::get<0>(x) > std::get<0>(y); });
            std::vector<Hyp> next;
            const bool at_limit = step + 1 >= limit[b];
            for (auto& [score, h, tok] : cand) {
                if (next.size() >= K || done[b].size() >= K) break;
                if (tok == opt.eos || at_limit) {
                    std::vector<std::int32_t> t = hs[h].tokens;
                    if (tok != opt.eos) t.push_back(tok);
                    const double norm = score / length_penalty(hs[h].tokens.size() + 1, opt.alpha);
                    done[b].push_back({std::move(t), norm});
                    continue;
                }
                Hyp nh{hs[h].tokens, score};
                nh.tokens.push_back(tok);
                next.push_back(std::move(nh));
                next_rows.push_back(row0 + h);
                next_tokens.push_back(tok);
            }
            row0 += nb;
            if (done[b].size() >= K || next.empty()) {
                // finished: drop this sentence's rows queued above
                next_rows.resize(next_rows.size() - next.size());
                next_tokens.resize(next_tokens.size() - next.size());
                beams[b].clear();
                continue;
            }
            beams[b] = std::move(next);
            next_active.push_back(b);
        }
        active = std::move(next_active);
        if (active.empty()) break;
        state.select(next_rows);
        tokens = std::move(next_tokens);
    }
    for (std::size_t b = 0; b < B; ++b) {
        if (done[b].empty()) continue;
        auto best = std::max_element(done[b].begin(), done[b].end(),
                                     [](const Finished& x, const Finished& y) { return x.norm < y.norm; });
        result[b] = best->tokens;
    }
    return result;
}

std::vector<std::vector<std::int32_t>> continue_greedy(const nn::Transformer<float>& model,
                                                       const std::vector<std::vector<std::int32_t>>& prompts,
                                                       std::size_t max_new, std::int32_t eos) {
    NoGradGuard no_grad;
    const std::size_t B = prompts.size(), V = model.config().tgt_vocab;
    std::vector<std::vector<std::int32_t>> out(B);
    if (B == 0) return out;
    std::size_t longest = 0;
    for (const auto& p : prompts) {
        if (p.empty()) throw std::invalid_argument("continue_greedy: an empty prompt");
        longest = std::max(longest, p.size());
    }
    // A learned position table bounds the whole sequence (prompt + answer).
    const std::size_t limit = std::min(longest + max_new, model.max_target_length());
    std::vector<bool> done(B, max_new == 0);
    auto state = model.start_decoding(limit);
    std::vector<std::int32_t> tokens(B);
    for (std::size_t t = 0; t < limit; ++t) {
        for (std::size_t b = 0; b < B; ++b)
            tokens[b] = t < prompts[b].size() ? prompts[b][t] : (out[b].empty() ? eos : out[b].back());
        Var<float> logits = model.decode_step(tokens, state);  // (B, V): the prediction for position t + 1
        const float* p = logits.data();
        bool all_done = true;
        for (std::size_t b = 0; b < B; ++b) {
            if (!done[b] && t + 1 >= prompts[b].size()) {
                const auto best = static_cast<std::int32_t>(std::max_element(p + b * V, p + (b + 1) * V) - (p + b * V));
                if (best == eos) done[b] = true;
                else {
                    out[b].push_back(best);
                    if (out[b].size() >= max_new) done[b] = true;
                }
            }
            all_done = all_done && done[b];
        }
        if (all_done) break;
    }
    return out;
}

DecodeOptions decode_options(const EvalConfig& e, std::size_t beam_override) {
    DecodeOptions o;
    o.beam = beam_override ? beam_override : static_cast<std::size_t>(e.beam);
    o.alpha = e.alpha;
    o.max_len_a = e.max_len_a;
    o.max_len_b = static_cast<std::size_t>(e.max_len_b);
    o.bos = BOS_ID;
    o.eos = EOS_ID;
    o.pad = PAD_ID;
    return o;
}


}  // namespace relpos
