// Small text helpers every room of experiments/ uses (the lowest floor: it depends on nothing in relpos).
#pragma once

#include <string>
#include <vector>

namespace relpos {

// "a, b, c" (or the items joined by `sep`).
std::string join(const std::vector<std::string>& items, const char* sep = ", ");

// `s` without leading and trailing spaces, tabs and line ends.
std::string trim(const std::string& s);

// True when `s` is well-formed UTF-8 (no overlong forms, surrogates or code points above U+10FFFF).
bool is_valid_utf8(const std::string& s);

}  // namespace relpos
