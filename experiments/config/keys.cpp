// Dotted config keys (model.position[1].k) as the overrides and sweep.grid write them.
#include <cctype>

#include "experiments/config/schema.hpp"

namespace relpos {

const char* const kKeyExample = "a dotted key such as model.dropout or model.position[1].k";

bool is_name_char(char ch) {
    return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '-';
}

std::optional<std::vector<KeyPart>> split_key(const std::string& key) {
    static const std::string grid_prefix = "sweep.grid.";
    if (key.compare(0, grid_prefix.size(), grid_prefix) == 0) {
        const std::string rest = key.substr(grid_prefix.size());
        if (!split_key(rest)) return std::nullopt;
        return std::vector<KeyPart>{{"sweep", {}}, {"grid", {}}, {rest, {}}};
    }
    std::vector<KeyPart> parts;
    std::size_t i = 0;
    while (true) {
        KeyPart p;
        while (i < key.size() && is_name_char(key[i])) p.name += key[i++];
        if (p.name.empty()) return std::nullopt;
        while (i < key.size() && key[i] == '[') {
            std::size_t j = i + 1;
            std::string digits;
            while (j < key.size() && std::isdigit(static_cast<unsigned char>(key[j]))) digits += key[j++];
            if (digits.empty() || digits.size() > 9 || j >= key.size() || key[j] != ']') return std::nullopt;
            p.indices.push_back(std::stoul(digits));
            i = j + 1;
        }
        parts.push_back(std::move(p));
        if (i == key.size()) return parts;
        if (key[i] != '.') return std::nullopt;
        ++i;
    }
}

}  // namespace relpos
