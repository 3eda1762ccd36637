#include "experiments/data/json.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include <fmt/format.h>

namespace relpos {

// The number written is the double nearest to the decimal text "{:.Nf}" (or "{:.Ng}"), and nlohmann
// prints a double in its shortest round-trip form, so the file holds exactly those digits.
Json json_number(double v, int decimals) {
    if (!std::isfinite(v)) return nullptr;
    return std::strtod(fmt::format("{:.{}f}", v, decimals).c_str(), nullptr);
}

Json json_significant(double v, int digits) {
    if (!std::isfinite(v)) return nullptr;
    return std::strtod(fmt::format("{:.{}g}", v, digits).c_str(), nullptr);
}

// Strings relpos writes are UTF-8 (configs and data are checked); a stray byte is replaced, not thrown.
// An object's line reads {"step": 1, "train_loss": 2.5}: a space after each colon and comma, as the files
// always had (a resumed run appends to lines written by an older relpos).
std::string json_line(const Json& j) {
    auto dump = [](const Json& v) { return v.dump(-1, ' ', false, Json::error_handler_t::replace); };
    if (!j.is_object()) return dump(j);
    std::string s = "{";
    for (auto it = j.begin(); it != j.end(); ++it)
        s += (it == j.begin() ? "" : ", ") + dump(Json(it.key())) + ": " + dump(it.value());
    return s + "}";
}

std::string json_document(const Json& j) { return j.dump(2, ' ', false, Json::error_handler_t::replace) + "\n"; }

bool is_string_list(const Json& j) {
    return j.is_array() && std::all_of(j.begin(), j.end(), [](const Json& e) { return e.is_string(); });
}

std::string read_text_file(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    std::ostringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

}  // namespace relpos
