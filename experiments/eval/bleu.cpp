#include "experiments/eval/bleu.hpp"

#include <locale.h>
#include <wctype.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <unordered_map>

#include "experiments/data/corpus.hpp"
#include "experiments/data/utf8.hpp"

namespace relpos {

namespace {

using Codepoints = std::u32string;

Codepoints decode_utf8(const std::string& s) { return utf8::decode(s); }  // callers validated it first
void append_utf8(std::string& out, std::uint32_t cp) { utf8::append(out, cp); }

// Python's str.isspace(), which str.split() and str.rstrip() use: ASCII whitespace, the information
// separators 0x1C-0x1F, NEL, NBSP and the Unicode space separators / line and paragraph separators.
bool py_isspace(std::uint32_t c) {
    return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 || c == 0x1680 ||
           (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

bool is_digit(std::uint32_t c) { return c >= '0' && c <= '9'; }  // Python's [0-9] is ASCII only

// The class of tokenizer_re.py's first regex, [\{-\~\[-\` -\&\(-\+\:-\@\/]: ASCII punctuation and
// symbols except ' (0x27), ',' '-' '.' (0x2C-0x2E), plus the space itself.
bool in_13a_split_class(std::uint32_t c) {
    return (c >= 0x7B && c <= 0x7E) || (c >= 0x5B && c <= 0x60) || (c >= 0x20 && c <= 0x26) ||
           (c >= 0x28 && c <= 0x2B) || (c >= 0x3A && c <= 0x40) || c == 0x2F;
}

// Python's str.replace: every non-overlapping occurrence, scanning left to right.
std::string replace_all(std::string s, const std::string& from, const std::string& to) {
    std::string out;
    std::size_t pos = 0;
    for (;;) {
        const std::size_t hit = s.find(from, pos);
        if (hit == std::string::npos) break;
        out.append(s, pos, hit - pos);
        out += to;
        pos = hit + from.size();
    }
    out.append(s, pos, std::string::npos);
    return out;
}

std::string rstrip_py(const std::string& s) {
    Codepoints cps = decode_utf8(s);
    while (!cps.empty() && py_isspace(cps.back())) cps.pop_back();
    std::string out;
    for (auto c : cps) append_utf8(out, c);
    return out;
}

std::string check_utf8(const std::string& line, const char* what, std::size_t i) {
    if (!is_valid_utf8(line))
        throw DataError(std::string("BLEU ") + what + " line " + std::to_string(i + 1) + " is not valid UTF-8.");
    return line;
}

// n-gram counts of orders 1..4; the key is the tokens joined by ' ' (tokens never contain a space).
using NgramCounts = std::unordered_map<std::string, std::size_t>;

NgramCounts extract_ngrams(const std::vector<std::string>& toks) {
    NgramCounts counts;
    for (std::size_t n = 1; n <= 4; ++n)
        for (std::size_t i = 0; i + n <= toks.size(); ++i) {
            std::string key = toks[i];
            for (std::size_t k = 1; k < n; ++k) key += ' ' + toks[i + k];
            ++counts[key];
        }
    return counts;
}

std::size_t order_of(const std::string& key) {
    std::size_t n = 1;
    for (char c : key) n += c == ' ';
    return n;
}

// sacrebleu.utils.my_log: log(0) is floored to -9999999999 so that exp() of the mean gives 0.
double my_log(double x) { return x == 0.0 ? -9999999999.0 : std::log(x); }

std::string fixed(double v, int digits) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", digits, v);
    return buf;
}

}  // namespace

std::string lowercase_unicode(const std::string& line) {
    // C.UTF-8 is built into glibc >= 2.35, so this does not depend on the user's installed locales.
    static const locale_t loc = newlocale(LC_CTYPE_MASK, "C.UTF-8", static_cast<locale_t>(nullptr));
    if (!loc) throw DataError("BLEU option lowercase needs the C.UTF-8 locale, which this C library lacks.");
    const Codepoints cps = decode_utf8(line);
    auto is_letter = [&](std::uint32_t c) { return iswalpha_l(static_cast<wint_t>(c), loc) != 0; };
    std::string out;
    out.reserve(line.size());
    for (std::size_t i = 0; i < cps.size(); ++i) {
        const std::uint32_t c = cps[i];
        if (c == 0x130) {  // Python: LATIN CAPITAL I WITH DOT ABOVE -> "i" + COMBINING DOT ABOVE
            out += "i\xCC\x87";
        } else if (c == 0x3A3 && i > 0 && is_letter(cps[i - 1]) && !(i + 1 < cps.size() && is_letter(cps[i + 1]))) {
            append_utf8(out, 0x3C2);  // final sigma at the end of a word
        } else {
            append_utf8(out, static_cast<std::uint32_t>(towlower_l(static_cast<wint_t>(c), loc)));
        }
    }
    return out;
}

std::vector<std::string> split_whitespace(const std::string& line) {
    std::vector<std::string> toks;
    std::string cur;
    for (auto c : decode_utf8(line)) {
        if (py_isspace(c)) {
            if (!cur.empty()) toks.push_back(std::move(cur));
            cur.clear();
        } else {
            append_utf8(cur, c);
        }
    }
    if (!cur.empty()) toks.push_back(std::move(cur));
    return toks;
}

std::string tokenize_13a(const std::string& input) {
    // tokenizer_13a.py, language-independent part.
    std::string line = replace_all(input, "<skipped>", "");
    line = replace_all(line, "-\n", "");
    line = replace_all(line, "\n", " ");
    line = replace_all(line, "&quot;", "\"");
    line = replace_all(line, "&amp;", "&");
    line = replace_all(line, "&lt;", "<");
    line = replace_all(line, "&gt;", ">");
    line = " " + line + " ";

    // tokenizer_re.py: four re.sub passes, each over the previous one's output. re.sub scans left to
    // right and resumes after each match, so a character consumed by one match cannot start the next.
    const Codepoints a = decode_utf8(line);
    Codepoints b;  // 1. ([\{-\~\[-\` -\&\(-\+\:-\@\/]) -> ' \1 '
    for (auto c : a) {
        if (in_13a_split_class(c)) {
            b.push_back(' ');
            b.push_back(c);
            b.push_back(' ');
        } else {
            b.push_back(c);
        }
    }
    Codepoints d;  // 2. ([^0-9])([\.,]) -> '\1 \2 '
    for (std::size_t i = 0; i < b.size();) {
        if (i + 1 < b.size() && !is_digit(b[i]) && (b[i + 1] == '.' || b[i + 1] == ',')) {
            d.insert(d.end(), {b[i], ' ', b[i + 1], ' '});
            i += 2;
        } else {
            d.push_back(b[i++]);
        }
    }
    Codepoints e;  // 3. ([\.,])([^0-9]) -> ' \1 \2'
    for (std::size_t i = 0; i < d.size();) {
        if (i + 1 < d.size() && (d[i] == '.' || d[i] == ',') && !is_digit(d[i + 1])) {
            e.insert(e.end(), {' ', d[i], ' ', d[i + 1]});
            i += 2;
        } else {
            e.push_back(d[i++]);
        }
    }
    Codepoints f;  // 4. ([0-9])(-) -> '\1 \2 '
    for (std::size_t i = 0; i < e.size();) {
        if (i + 1 < e.size() && is_digit(e[i]) && e[i + 1] == '-') {
            f.insert(f.end(), {e[i], ' ', '-', ' '});
            i += 2;
        } else {
            f.push_back(e[i++]);
        }
    }
    // ' '.join(line.strip().split())
    std::string out;
    bool pending_space = false;
    for (auto c : f) {
        if (py_isspace(c)) {
            pending_space = !out.empty();
        } else {
            if (pending_space) out += ' ';
            pending_space = false;
            append_utf8(out, c);
        }
    }
    return out;
}

namespace {
void check_options(const BleuOptions& opt) {
    if (opt.tokenize != "13a" && opt.tokenize != "none")
        throw DataError("BLEU option tokenize is '" + opt.tokenize + "'; allowed: 13a, none.");
    if (opt.smooth != "exp" && opt.smooth != "none" && opt.smooth != "floor" && opt.smooth != "add-k")
        throw DataError("BLEU option smooth is '" + opt.smooth + "'; allowed: exp, none, floor, add-k.");
}
}  // namespace

std::vector<BleuStats> sentence_bleu_stats(const std::vector<std::string>& hyps, const std::vector<std::string>& refs,
                                           const BleuOptions& opt) {
    check_options(opt);
    if (hyps.size() != refs.size())
        throw DataError("BLEU needs one hypothesis per reference, but got " + std::to_string(hyps.size()) +
                        " hypotheses and " + std::to_string(refs.size()) + " references.");
    const bool tok13a = opt.tokenize == "13a";
    auto preprocess = [&](const std::string& s) {  // BLEU._preprocess_segment: lower, rstrip, tokenize
        const std::string t = rstrip_py(opt.lowercase ? lowercase_unicode(s) : s);
        return split_whitespace(tok13a ? tokenize_13a(t) : t);
    };
    std::vector<BleuStats> out(hyps.size());
    for (std::size_t i = 0; i < hyps.size(); ++i) {
        check_utf8(hyps[i], "hypothesis", i);
        check_utf8(refs[i], "reference", i);
        if (refs[i].empty()) throw DataError("BLEU reference line " + std::to_string(i + 1) + " is empty.");
        const auto ref_toks = preprocess(refs[i]);
        const auto hyp_toks = preprocess(hyps[i]);
        const NgramCounts ref_ngrams = extract_ngrams(ref_toks);
        BleuStats& st = out[i];
        st.hyp_len = hyp_toks.size();
        st.ref_len = ref_toks.size();  // one reference: it is the closest
        for (const auto& [gram, count] : extract_ngrams(hyp_toks)) {
            const std::size_t n = order_of(gram) - 1;
            st.total[n] += double(count);
            const auto it = ref_ngrams.find(gram);
            if (it != ref_ngrams.end()) st.correct[n] += double(std::min(count, it->second));
        }
    }
    return out;
}

BleuResult bleu_from_stats(const BleuStats& sum, const BleuOptions& opt) {
    check_options(opt);
    double smooth_value = opt.smooth_value;
    if (smooth_value < 0) smooth_value = opt.smooth == "floor" ? 0.1 : opt.smooth == "add-k" ? 1.0 : 0.0;
    const std::size_t sys_len = sum.hyp_len, ref_len = sum.ref_len;
    std::array<double, 4> correct = sum.correct, total = sum.total;

    // BLEU.compute_bleu, step by step.
    BleuResult r;
    r.hyp_len = sys_len;
    r.ref_len = ref_len;
    r.ratio = ref_len ? double(sys_len) / double(ref_len) : 0.0;
    if (sys_len < ref_len) r.bp = sys_len > 0 ? std::exp(1.0 - double(ref_len) / double(sys_len)) : 0.0;
    else r.bp = 1.0;
    std::string smooth_sig = opt.smooth;
    if (opt.smooth == "floor" || opt.smooth == "add-k") smooth_sig += "[" + fixed(smooth_value, 2) + "]";
    r.signature = std::string("nrefs:1|case:") + (opt.lowercase ? "lc" : "mixed") + "|eff:no|tok:" + opt.tokenize + "|smooth:" + smooth_sig + "|version:2.x-relpos";

    bool any_correct = false;
    for (double c : correct) any_correct = any_correct || c != 0.0;
    if (!any_correct) {  // sacreBLEU's early exit: score 0, precisions reported as 0
        r.counts = correct;
        r.totals = total;
        return r;
    }
    double smooth_mteval = 1.0;
    for (std::size_t n = 1; n <= 4; ++n) {
        if (opt.smooth == "add-k" && n > 1) {
            correct[n - 1] += smooth_value;
            total[n - 1] += smooth_value;
        }
        if (total[n - 1] == 0.0) break;  // no n-grams of this order: p_n stays 0, so BLEU is 0
        if (correct[n - 1] == 0.0) {
            if (opt.smooth == "exp") {
                smooth_mteval *= 2;
                r.precisions[n - 1] = 100. / (smooth_mteval * total[n - 1]);
            } else if (opt.smooth == "floor") {
                r.precisions[n - 1] = 100. * smooth_value / total[n - 1];
            }
        } else {
            r.precisions[n - 1] = 100. * correct[n - 1] / total[n - 1];
        }
    }
    double log_sum = 0.0;  // left-to-right, as Python's sum()
    for (double p : r.precisions) log_sum += my_log(p);
    r.score = r.bp * std::exp(log_sum / 4.0);
    r.counts = correct;
    r.totals = total;
    return r;
}

BleuResult corpus_bleu(const std::vector<std::string>& hyps, const std::vector<std::string>& refs,
                       const BleuOptions& opt) {
    // Sufficient statistics summed over segments (sacreBLEU's sum_of_lists).
    BleuStats sum;
    for (const BleuStats& st : sentence_bleu_stats(hyps, refs, opt)) sum += st;
    return bleu_from_stats(sum, opt);
}

std::string BleuResult::format() const {
    std::string s = "BLEU = " + fixed(score, 2) + " ";
    for (std::size_t n = 0; n < 4; ++n) s += (n ? "/" : "") + fixed(precisions[n], 1);
    s += " (BP = " + fixed(bp, 3) + " ratio = " + fixed(ratio, 3) + " hyp_len = " + std::to_string(hyp_len) +
         " ref_len = " + std::to_string(ref_len) + ")";
    return s;
}

}  // namespace relpos
