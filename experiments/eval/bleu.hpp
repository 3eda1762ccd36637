// Corpus BLEU computed the way sacreBLEU 2.x computes it by default (sacrebleu.corpus_bleu(hyps, [refs])):
// each line is rstripped and tokenized (13a = mteval-v13a, or none = split on whitespace), n-grams of
// order 1..4 are counted with clipping against one reference, and
//     BLEU = BP * exp(mean_n log p_n),   p_n = 100 * matched_n / total_n,
//     BP = exp(1 - r / c) if c < r else 1   (c = hypothesis tokens, r = reference tokens).
// Smoothing (sacreBLEU's default is 'exp'): with 'exp', an order with zero matches gets
// p_n = 100 / (2^k * total_n) for the k-th such order, so a corpus with some matches but no matching
// 4-gram still scores above 0; with 'none' any zero p_n gives BLEU 0 (what multi-bleu.perl does).
// Every method gives 0 when nothing matches at all, or when the hypotheses are too short to contain an
// n-gram of some order (sacreBLEU's early exit / floored log). Scores and precisions are in percent.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <vector>

namespace relpos {

struct BleuOptions {
    std::string tokenize = "13a";  // "13a" (sacreBLEU's default) or "none" (already tokenized text)
    bool lowercase = false;        // sacreBLEU's -lc: lowercase both sides first (signature case:lc)
    std::string smooth = "exp";    // "exp" (default), "none", "floor", "add-k"
    double smooth_value = -1;      // for floor (default 0.1) and add-k (default 1); < 0 = default
};

struct BleuResult {
    double score = 0;                   // 0..100
    std::array<double, 4> precisions{};  // p_1..p_4 in percent (after smoothing, as sacreBLEU reports them)
    std::array<double, 4> counts{};      // matched n-grams per order (add-k adds k for n > 1, as sacreBLEU)
    std::array<double, 4> totals{};      // hypothesis n-grams per order
    double bp = 0;                      // brevity penalty
    double ratio = 0;                   // hyp_len / ref_len (0 when ref_len is 0)
    std::size_t hyp_len = 0, ref_len = 0;
    std::string signature;  // e.g. "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.x-relpos"

    // sacreBLEU's line: "BLEU = 34.45 65.3/40.1/27.3/19.1 (BP = 1.000 ratio = 1.000 hyp_len = 9 ref_len = 9)".
    std::string format() const;
};

// BLEU's sufficient statistics of one segment (or, summed, of a corpus): matched and total n-grams per
// order and the two lengths. Summing them over any subset of segments and scoring the sum gives that
// subset's corpus BLEU, which is what bootstrap resampling over test sentences needs.
struct BleuStats {
    std::array<double, 4> correct{}, total{};
    std::size_t hyp_len = 0, ref_len = 0;
    BleuStats& operator+=(const BleuStats& o) {
        for (std::size_t n = 0; n < 4; ++n) correct[n] += o.correct[n], total[n] += o.total[n];
        hyp_len += o.hyp_len;
        ref_len += o.ref_len;
        return *this;
    }
};
// One BleuStats per segment (the checks of corpus_bleu apply).
std::vector<BleuStats> sentence_bleu_stats(const std::vector<std::string>& hyps, const std::vector<std::string>& refs,
                                           const BleuOptions& opt = {});
// Corpus BLEU from summed statistics (smoothing and brevity penalty as corpus_bleu).
BleuResult bleu_from_stats(const BleuStats& sum, const BleuOptions& opt = {});

// Corpus BLEU of hyps[i] against refs[i]. Throws DataError when the two counts differ, a reference is
// empty (sacreBLEU rejects those), a line is not valid UTF-8, or an option is not one listed above.
BleuResult corpus_bleu(const std::vector<std::string>& hyps, const std::vector<std::string>& refs,
                       const BleuOptions& opt = {});

// sacreBLEU's 13a tokenizer (a port of tokenizer_13a.py + tokenizer_re.py): drops "<skipped>", unescapes
// &quot; &amp; &lt; &gt;, splits off ASCII punctuation and symbols except ' - . , (so "it's" and
// "well-known" stay whole), splits off '.' and ',' unless a digit stands on both sides ("1,000.5" stays),
// splits off '-' after a digit, and joins the tokens with single spaces.
std::string tokenize_13a(const std::string& line);

// Python's str.lower() (Unicode full lowercase mapping, through glibc's C.UTF-8 tables, which agree with
// Python 3.11 on every code point except U+0130, handled here; Greek final sigma by a simplified rule).
std::string lowercase_unicode(const std::string& line);

// Splits on whitespace exactly as Python's str.split() does (ASCII and Unicode spaces).
std::vector<std::string> split_whitespace(const std::string& line);

}  // namespace relpos
