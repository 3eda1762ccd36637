// UTF-8 <-> code points, shared by the BLEU tokenizers (experiments/eval/bleu.cpp) and the raw-text
// normalizer (experiments/data/normalize.cpp).
#pragma once

#include <string>

namespace relpos::utf8 {

// Appends code point c as UTF-8; a lone surrogate U+DC80..U+DCFF (what decode makes of an invalid byte)
// is written back as that byte.
inline void append(std::string& s, char32_t c) {
    if (c >= 0xDC80 && c <= 0xDCFF) {
        s += static_cast<char>(c - 0xDC00);
    } else if (c < 0x80) {
        s += static_cast<char>(c);
    } else if (c < 0x800) {
        s += static_cast<char>(0xC0 | (c >> 6));
        s += static_cast<char>(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
        s += static_cast<char>(0xE0 | (c >> 12));
        s += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
        s += static_cast<char>(0x80 | (c & 0x3F));
    } else {
        s += static_cast<char>(0xF0 | (c >> 18));
        s += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
        s += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
        s += static_cast<char>(0x80 | (c & 0x3F));
    }
}

// A byte that is not part of valid UTF-8 becomes U+DC80 + byte (a lone
// surrogate, which valid UTF-8 never holds) and is written back as the same byte.
inline std::u32string decode(const std::string& s) {
    std::u32string t;
    for (std::size_t i = 0; i < s.size();) {
        const auto b = static_cast<unsigned char>(s[i]);
        const std::size_t n = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xE ? 3 : (b >> 3) == 0x1E ? 4 : 0;
        char32_t c = n == 1 ? b : n == 2 ? b & 0x1F : n == 3 ? b & 0x0F : b & 0x07;
        bool ok = n > 0 && i + n <= s.size();
        for (std::size_t k = 1; ok && k < n; ++k) {
            const auto cont = static_cast<unsigned char>(s[i + k]);
            ok = (cont >> 6) == 0x2;
            c = (c << 6) | (cont & 0x3F);
        }
        static const char32_t smallest[] = {0, 0, 0x80, 0x800, 0x10000};
        ok = ok && c >= smallest[n] && c <= 0x10FFFF && !(c >= 0xD800 && c <= 0xDFFF);
        if (ok) {
            t += c;
            i += n;
        } else {
            t += char32_t(0xDC00 + b);
            i += 1;
        }
    }
    return t;
}

inline std::string encode(const std::u32string& t) {
    std::string s;
    for (char32_t c : t) append(s, c);
    return s;
}

}  // namespace relpos::utf8
