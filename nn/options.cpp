#include "nn/options.hpp"

#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>

#include "nn/printable.hpp"

namespace relpos::nn {

std::optional<std::string> did_you_mean(const std::string& word, const std::vector<std::string>& candidates) {
    auto dist = [](const std::string& a, const std::string& b) {
        std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
        for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
        for (std::size_t i = 1; i <= a.size(); ++i) {
            cur[0] = i;
            for (std::size_t j = 1; j <= b.size(); ++j)
                cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
            std::swap(prev, cur);
        }
        return prev[b.size()];
    };
    std::optional<std::string> best;
    std::size_t best_d = 0;
    for (const auto& c : candidates) {
        const std::size_t d = dist(word, c);
        if (!best || d < best_d) {
            best = c;
            best_d = d;
        }
    }
    if (best && best_d <= std::max<std::size_t>(2, word.size() / 3)) return best;
    return std::nullopt;
}

void MapOptions::fail(const std::string& key, const std::string& what) {
    throw OptionError(printable(fmt::format("{}: '{}' {}", where_, key, what)));  // the values quoted, escaped
}

long MapOptions::get_int(const std::string& key, long def, long min, long max) {
    used_.insert(key);
    auto it = m_.find(key);
    if (it == m_.end()) return def;
    char* end = nullptr;
    const long v = std::strtol(it->second.c_str(), &end, 10);
    if (it->second.empty() || *end != '\0') fail(key, fmt::format("must be an integer, got '{}'", it->second));
    if (v < min || v > max) fail(key, fmt::format("must be between {} and {}, got {}", min, max, v));
    return v;
}

double MapOptions::get_double(const std::string& key, double def, double min, double max) {
    used_.insert(key);
    auto it = m_.find(key);
    if (it == m_.end()) return def;
    char* end = nullptr;
    const double v = std::strtod(it->second.c_str(), &end);
    if (it->second.empty() || *end != '\0') fail(key, fmt::format("must be a number, got '{}'", it->second));
    if (v < min || v > max) fail(key, fmt::format("must be between {} and {}, got {}", min, max, v));
    return v;
}

bool MapOptions::get_bool(const std::string& key, bool def) {
    used_.insert(key);
    auto it = m_.find(key);
    if (it == m_.end()) return def;
    if (it->second == "true") return true;
    if (it->second == "false") return false;
    fail(key, fmt::format("must be true or false, got '{}'", it->second));  // [[noreturn]]
    return def;
}

std::string MapOptions::get_string(const std::string& key, const std::string& def,
                                   const std::vector<std::string>& allowed) {
    used_.insert(key);
    auto it = m_.find(key);
    if (it == m_.end()) return def;
    if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), it->second) == allowed.end()) {
        std::string list;
        for (auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
        fail(key, fmt::format("must be one of {}, got '{}'", list, it->second));
    }
    return it->second;
}

void MapOptions::finish() {
    std::vector<std::string> known(used_.begin(), used_.end());
    for (auto& [k, v] : m_) {
        if (used_.count(k)) continue;
        auto s = did_you_mean(k, known);
        fail(k, s ? fmt::format("is not a known option (did you mean '{}'?)", *s) : "is not a known option");
    }
}

}  // namespace relpos::nn
