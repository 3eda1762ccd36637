#include "experiments/eval/scoring.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>

namespace relpos {

bool is_bleu_metric(const std::string& metric) { return metric == "bleu" || metric == "bleu_tok"; }

BleuOptions bleu_options(const std::string& metric, bool tokenized_text) {
    BleuOptions bo;
    if (metric == "bleu_tok") bo.tokenize = "none";
    else if (tokenized_text) bo.lowercase = true;
    return bo;
}

std::vector<std::string> bleu_hypotheses(const std::string& metric, std::vector<std::string> hyps, bool tokenized_text) {
    if (metric == "bleu" && tokenized_text)
        for (auto& h : hyps) h = moses_untokenize(h);
    return hyps;
}

BleuResult score_bleu(const std::string& metric, const std::vector<std::string>& hyps,
                      const std::vector<std::string>& refs, bool tokenized_text) {
    return corpus_bleu(bleu_hypotheses(metric, hyps, tokenized_text), refs, bleu_options(metric, tokenized_text));
}

std::vector<BleuStats> sentence_bleu(const std::string& metric, const std::vector<std::string>& hyps,
                                     const std::vector<std::string>& refs, bool tokenized_text) {
    return sentence_bleu_stats(bleu_hypotheses(metric, hyps, tokenized_text), refs, bleu_options(metric, tokenized_text));
}

double token_accuracy(const std::vector<std::string>& hyps, const std::vector<std::string>& refs) {
    std::size_t right = 0, total = 0;
    for (std::size_t i = 0; i < std::min(hyps.size(), refs.size()); ++i) {
        const auto h = split_whitespace(hyps[i]), r = split_whitespace(refs[i]);
        for (std::size_t j = 0; j < std::min(h.size(), r.size()); ++j) right += h[j] == r[j];
        total += std::max(h.size(), r.size());
    }
    return total == 0 ? 0.0 : 100.0 * double(right) / double(total);
}

std::string moses_untokenize(const std::string& s) {
    static const std::pair<const char*, const char*> esc[] = {{"&apos;", "'"}, {"&quot;", "\""}, {"&lt;", "<"},
                                                              {"&gt;", ">"},   {"&#91;", "["}, {"&#93;", "]"},
                                                              {"&#124;", "|"}, {"&amp;", "&"}};
    std::string r = s;
    for (auto [from, to] : esc)
        for (std::size_t p = r.find(from); p != std::string::npos; p = r.find(from, p + std::strlen(to)))
            r.replace(p, std::strlen(from), to);
    // English clitics: Moses splits "it's" into "it 's" (and "don't" into "don 't"); 13a does not.
    std::string out;
    for (std::size_t i = 0; i < r.size(); ++i) {
        if (r[i] == ' ' && i + 1 < r.size() && r[i + 1] == '\'' && i > 0 && std::isalpha(static_cast<unsigned char>(r[i - 1])) &&
            i + 2 < r.size() && std::isalpha(static_cast<unsigned char>(r[i + 2])))
            continue;
        out += r[i];
    }
    return out;
}

}  // namespace relpos
