// Three passes, in the order the Multi30k files were made: lowercase, unify punctuation, tokenize. Each
// works on code points (UTF-32), so that "ä" or "„" is one character. The rules were read off the data
// (data/multi30k/README.md, "Normalizing raw input"): the comments give an example from the files.
#include "experiments/tasks/multi30k_normalize.hpp"

#include "experiments/data/utf8.hpp"

#include <algorithm>
#include <vector>

namespace relpos {

namespace {

using Text = std::u32string;
using utf8::decode;
using utf8::encode;

// ---- character classes. Exact for ASCII and Latin-1, which is all the files hold; above it everything
// but the punctuation and symbol blocks counts as a letter, which is what Moses' \p{IsAlpha} says for
// the scripts a caption is likely to use (and so an invalid byte stays inside its word).
bool is_digit(char32_t c) { return c >= '0' && c <= '9'; }
bool is_ascii_letter(char32_t c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_letter(char32_t c) {
    if (c < 0x80) return is_ascii_letter(c);
    if (c < 0x100) return (c >= 0xC0 && c != 0xD7 && c != 0xF7) || c == 0xAA || c == 0xB5 || c == 0xBA;
    const bool symbol = (c >= 0x2000 && c <= 0x2BFF) || (c >= 0x3000 && c <= 0x303F) || (c >= 0xFE30 && c <= 0xFE6F) ||
                        (c >= 0xFF01 && c <= 0xFF0F) || (c >= 0x1F000 && c <= 0x1FAFF);
    return !symbol;
}
// Tab and no-break space count: "Nummer\u00a028." -> "nummer 28." (train.de line 5169).
bool is_space(char32_t c) {
    return c == ' ' || (c >= '\t' && c <= '\r') || c == 0xA0 || (c >= 0x2000 && c <= 0x200A) || c == 0x202F ||
           c == 0x205F || c == 0x3000;
}

// ---- pass 1: lowercase
char32_t to_lower(char32_t c) {
    if (c >= 'A' && c <= 'Z') return c + 32;
    if (c >= 0xC0 && c <= 0xDE && c != 0xD7) return c + 32;  // Latin-1: Ä Ö Ü É ... -> ä ö ü é
    if (c == 0x1E9E) return 0xDF;                             // ẞ -> ß
    return c;
}

// ---- pass 2: one form for each punctuation mark, and the quote-period order of the language
Text unify_punctuation(const Text& s, bool en) {
    Text t;
    for (std::size_t i = 0; i < s.size(); ++i) {
        const char32_t c = s[i];
        const char32_t prev = i > 0 ? s[i - 1] : ' ', next = i + 1 < s.size() ? s[i + 1] : ' ';
        if (c == U'„' || c == U'“' || c == U'”' || c == U'«' || c == U'»') {
            t += '"';  // „Welcome Bikers“ -> "welcome bikers"
        } else if (c == U'–') {
            t += '-';
        } else if (c == U'—') {
            t += U" - ";
        } else if (c == '`' || c == U'´') {
            t += '\'';  // "women` s" -> "women ' s"
        } else if (c == U'‘' || c == U'’' || c == U'‚') {
            // Inside a word an apostrophe ("Joe‘s", "McDonald’s"), otherwise a quote ("Hook ’em").
            t += is_ascii_letter(prev) && is_ascii_letter(next) ? '\'' : '"';
        } else if (c == U'…') {
            t += U"...";
        } else if (c == '\'' && next == '\'') {
            t += '"';  // '' -> "
            ++i;
        } else {
            t += is_space(c) ? char32_t(' ') : c;
        }
    }
    // The files put , and . inside a closing quote in English (`"tea."`) and outside it in German
    // (`„Arbeitnehmer.“` -> `"arbeitnehmer".`): en `".` -> `."`, de `."` -> `".` and `,"` -> `",`.
    Text u;
    for (std::size_t i = 0; i < t.size(); ++i) {
        std::size_t j = i;
        if (en && t[i] == '"') {
            while (j + 1 < t.size() && (t[j + 1] == ',' || t[j + 1] == '.')) ++j;
            if (j > i) {
                u.append(t, i + 1, j - i);
                u += '"';
                i = j;
                continue;
            }
        } else if (!en && (t[i] == ',' || t[i] == '.')) {
            while (t[i] == '.' && j + 1 < t.size() && t[j + 1] == '.') ++j;
            if (j + 1 < t.size() && t[j + 1] == '"') {
                u += '"';
                u.append(t, i, j - i + 1);
                i = j + 1;
                continue;
            }
        }
        u += t[i];
    }
    return u;
}

// ---- pass 3: tokens
// Words that keep their period wherever they stand: the lowercase entries of Moses' non-breaking prefix
// lists (the capitalized ones never match lowercased text). In German single letters ("q & a."), roman
// numerals, ordinals below 100 ("nummer 28.") and abbreviations ("ca. 120 cm", val.de line 76).
bool keeps_period(const Text& word, bool en) {
    static const std::vector<Text> english = {U"v", U"vs", U"rev"};
    static const std::vector<Text> german = {
        U"bzgl", U"bzw", U"ca", U"dergl", U"dgl", U"etc", U"evtl", U"ff", U"ggf", U"jun", U"pp", U"sen", U"sog",
        U"sogen", U"spp", U"usf", U"usw", U"vgl", U"vs", U"zzt", U"i", U"ii", U"iii", U"iv", U"v", U"vi",
        U"vii", U"viii", U"ix", U"x", U"xi", U"xii", U"xiii", U"xiv", U"xv", U"xvi", U"xvii", U"xviii", U"xix", U"xx"};
    const auto& list = en ? english : german;
    if (std::find(list.begin(), list.end(), word) != list.end()) return true;
    if (en) return false;
    if (word.size() == 1 && is_letter(word[0])) return true;
    return (word.size() == 1 || word.size() == 2) && word[0] != '0' && is_digit(word[0]) && is_digit(word.back());
}

std::vector<Text> split_words(const Text& s) {
    std::vector<Text> words;
    Text w;
    for (char32_t c : s) {
        if (c != ' ') {
            w += c;
        } else if (!w.empty()) {
            words.push_back(w);
            w.clear();
        }
    }
    if (!w.empty()) words.push_back(w);
    return words;
}

std::vector<Text> tokenize(const Text& s, bool en) {
    Text t;  // s with spaces around every piece that becomes a token of its own
    for (std::size_t i = 0; i < s.size(); ++i) {
        const char32_t c = s[i];
        const char32_t prev = i > 0 ? s[i - 1] : ' ', next = i + 1 < s.size() ? s[i + 1] : ' ';
        if (is_letter(c) || is_digit(c) || c == '-' || c == ' ') {
            t += c;  // hyphens stay inside words: "saftig-grünes"
        } else if (c == ',') {
            t += is_digit(prev) && is_digit(next) ? Text(U",") : Text(U" , ");  // "95,000" stays
        } else if (c == '.' && next == '.') {
            std::size_t j = i;  // a run of dots is one token: "sand.." -> "sand .."
            while (j + 1 < s.size() && s[j + 1] == '.') ++j;
            t += U" " + s.substr(i, j - i + 1) + U" ";
            i = j;
        } else if (c == '.') {
            t += c;  // decided per word below
        } else if (c == '\'' && en && ((is_letter(prev) && is_letter(next)) || (is_digit(prev) && next == 's'))) {
            t += U" '";  // English clitics stay on the word after: "aren't" -> "aren 't", "1990's" -> "1990 's"
        } else {
            t += U" ";  // everything else stands alone: ( ) " ' ! ? ; : / & % # ...
            t += c;
            t += U" ";
        }
    }
    // A word's final period is split off ("frau." -> "frau ."), except on words with a period and a
    // letter inside ("u.s.", "avrovulcan.com."), before a word that starts with a (lowercase) letter
    // ("straße. eine" stays, as the files lowercased first), and as keeps_period says.
    std::vector<Text> words = split_words(t), out;
    for (std::size_t i = 0; i < words.size(); ++i) {
        const Text& w = words[i];
        if (w.size() < 2 || w.back() != '.' || w.find_first_not_of('.') == Text::npos) {
            out.push_back(w);
            continue;
        }
        const Text pre = w.substr(0, w.size() - 1);
        bool inner = false, letter = false;
        for (char32_t c : pre) inner |= c == '.', letter |= is_letter(c);
        const bool keep =
            (inner && letter) || keeps_period(pre, en) || (i + 1 < words.size() && is_letter(words[i + 1][0]));
        out.push_back(keep ? w : pre);
        if (!keep) out.push_back(U".");
    }
    return out;
}

// The Moses escapes, which the files keep: "woman's" -> "woman &apos;s".
std::string escape(const Text& word) {
    std::string s;
    for (char32_t c : word) {
        switch (c) {
        case '&': s += "&amp;"; break;
        case '|': s += "&#124;"; break;
        case '<': s += "&lt;"; break;
        case '>': s += "&gt;"; break;
        case '\'': s += "&apos;"; break;
        case '"': s += "&quot;"; break;
        case '[': s += "&#91;"; break;
        case ']': s += "&#93;"; break;
        default: s += encode(Text(1, c));
        }
    }
    return s;
}

}  // namespace

std::string normalize_like_multi30k(const std::string& line, const std::string& lang) {
    const bool en = lang == "en";
    Text s = decode(line);
    for (char32_t& c : s) c = to_lower(c);
    std::string out;
    for (const Text& w : tokenize(unify_punctuation(s, en), en)) out += (out.empty() ? "" : " ") + escape(w);
    return out;
}

bool looks_tokenized(const std::string& line) {
    for (const char* e : {"&apos;", "&quot;", "&amp;", "&lt;", "&gt;"})
        if (line.find(e) != std::string::npos) return true;
    std::size_t end = line.find_last_not_of(" \t\r");
    return end != std::string::npos && end > 0 && (line[end] == '.' || line[end] == '!' || line[end] == '?') &&
           line[end - 1] == ' ';
}

}  // namespace relpos
