#include "nn/printable.hpp"

#include <fmt/format.h>

namespace relpos::nn {

namespace {

// The length of the valid UTF-8 sequence at text[i] and its code point, or 0 when the byte there does
// not start one (a stray continuation byte, an overlong form, a surrogate, beyond U+10FFFF, cut short).
std::size_t utf8_sequence(const std::string& text, std::size_t i, char32_t* code) {
    const auto b = static_cast<unsigned char>(text[i]);
    const std::size_t n = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xE ? 3 : (b >> 3) == 0x1E ? 4 : 0;
    if (n == 0 || i + n > text.size()) return 0;
    char32_t c = n == 1 ? b : n == 2 ? b & 0x1F : n == 3 ? b & 0x0F : b & 0x07;
    for (std::size_t k = 1; k < n; ++k) {
        const auto cont = static_cast<unsigned char>(text[i + k]);
        if ((cont >> 6) != 0x2) return 0;
        c = (c << 6) | (cont & 0x3F);
    }
    static const char32_t smallest[] = {0, 0, 0x80, 0x800, 0x10000};
    if (c < smallest[n] || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return 0;
    *code = c;
    return n;
}

bool invisible(char32_t c) {
    return (c >= 0x80 && c <= 0x9F) || c == 0x200E || c == 0x200F || c == 0x2028 || c == 0x2029 ||
           (c >= 0x202A && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069);
}

}  // namespace

std::string printable(const std::string& text) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size();) {
        char32_t c = 0;
        const std::size_t n = utf8_sequence(text, i, &c);
        if (n == 0 || c < 0x20 || c == 0x7F) {
            out += fmt::format("\\x{:02X}", static_cast<unsigned char>(text[i]));
            ++i;
        } else if (invisible(c)) {
            out += fmt::format("\\u{:04X}", static_cast<unsigned>(c));
            i += n;
        } else {
            out.append(text, i, n);
            i += n;
        }
    }
    return out;
}

}  // namespace relpos::nn
