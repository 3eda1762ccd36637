#include "experiments/config/yaml_options.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>

#include <fmt/format.h>

#include "experiments/util/text.hpp"
#include "nn/printable.hpp"

namespace relpos {

namespace {

// " >= 0", " in [0, 1)", or "" when unbounded: appended to "must be an integer" / "must be a number".
std::string int_range_text(long min, long max) {
    const bool lo = min != std::numeric_limits<long>::min();
    const bool hi = max != std::numeric_limits<long>::max();
    if (lo && hi) return fmt::format(" in [{}, {}]", min, max);
    if (lo) return fmt::format(" >= {}", min);
    if (hi) return fmt::format(" <= {}", max);
    return "";
}

bool bounded(double v) { return std::isfinite(v) && std::abs(v) != std::numeric_limits<double>::max(); }

std::string number_range_text(double min, double max, bool min_open, bool max_open) {
    const bool lo = bounded(min), hi = bounded(max);
    if (lo && hi) return fmt::format(" in {}{}, {}{}", min_open ? '(' : '[', min, max, max_open ? ')' : ']');
    if (lo) return fmt::format(" {} {}", min_open ? ">" : ">=", min);
    if (hi) return fmt::format(" {} {}", max_open ? "<" : "<=", max);
    return "";
}

std::string trim_range(const std::string& r) { return r.empty() || r[0] != ' ' ? r : r.substr(1); }

bool parse_long(const std::string& s, long& out, bool& overflow) {
    if (s.empty() || std::isspace(static_cast<unsigned char>(s[0]))) return false;
    errno = 0;
    char* end = nullptr;
    out = std::strtol(s.c_str(), &end, 10);
    overflow = errno == ERANGE;
    return *end == '\0';
}

bool parse_double(const std::string& s, double& out) {
    if (s.empty() || std::isspace(static_cast<unsigned char>(s[0]))) return false;
    char* end = nullptr;
    out = std::strtod(s.c_str(), &end);
    return *end == '\0';
}

// YAML 1.2 core-schema booleans only: `yes`/`no`/`on` read as strings elsewhere, so they are errors here
// rather than silently true (YAML 1.1's "Norway problem").
bool parse_bool(const std::string& s, bool& out) {
    if (s == "true" || s == "True" || s == "TRUE") return out = true, true;
    if (s == "false" || s == "False" || s == "FALSE") return out = false, true;
    return false;
}

std::string not_allowed(const std::string& value, const std::vector<std::string>& allowed) {
    std::string what = fmt::format("must be one of {}, got '{}'", join(allowed), value);
    if (auto s = nn::did_you_mean(value, allowed)) what += fmt::format(" (did you mean '{}'?)", *s);
    return what;
}

}  // namespace

bool key_contains(const std::string& outer, const std::string& inner) {
    if (outer.empty()) return false;
    if (inner == outer) return true;
    return inner.size() > outer.size() && inner.compare(0, outer.size(), outer) == 0 &&
           (inner[outer.size()] == '.' || inner[outer.size()] == '[');
}

std::string describe_node(const YAML::Node& node) {
    if (!node.IsDefined() || node.IsNull()) return "no value";
    if (node.IsScalar()) return "'" + nn::printable(node.Scalar()) + "'";
    if (node.IsSequence()) return "a list";
    return "a map";
}

YamlOptions::YamlOptions(YAML::Node node, std::string file, std::string key,
                         std::shared_ptr<const ValueOrigins> origins, YAML::Mark fallback)
    : node_(std::move(node)), file_(std::move(file)), key_(std::move(key)), origins_(std::move(origins)),
      mark_(fallback) {
    own_mark_ = node_.IsDefined() && !node_.Mark().is_null();
    mark_ = mark_of(node_);
    if (!node_.IsDefined() || node_.IsNull()) return;
    if (!node_.IsMap()) fail_at(node_, key_, fmt::format("must be a map of settings, got {}", describe_node(node_)));
    for (auto it = node_.begin(); it != node_.end(); ++it) {
        const YAML::Node k = it->first;
        if (!k.IsScalar() || k.Scalar().empty())
            fail_at(k, key_, fmt::format("keys must be names, got {}", describe_node(k)));
        if (const Entry* prev = find(k.Scalar())) {
            const YAML::Mark m = prev->key_node.Mark();
            fail_at(k, key_path(k.Scalar()), fmt::format("duplicate key (first given at line {})", m.line + 1));
        }
        entries_.push_back({k.Scalar(), k, it->second});
    }
}

const YamlOptions::Entry* YamlOptions::find(const std::string& key) const {
    for (const auto& e : entries_)
        if (e.name == key) return &e;
    return nullptr;
}

std::string YamlOptions::key_path(const std::string& key) const { return key_.empty() ? key : key_ + "." + key; }

const ValueOrigin* YamlOptions::origin_of(const std::string& full_key) const {
    if (!origins_) return nullptr;
    // The last override wins, as it does when the overrides are applied.
    for (auto it = origins_->rbegin(); it != origins_->rend(); ++it)
        if (key_contains(it->key, full_key) || key_contains(full_key, it->key)) return &*it;
    return nullptr;
}

bool YamlOptions::from_override(const std::string& key) const { return origin_of(key_path(key)) != nullptr; }

YAML::Mark YamlOptions::mark_of(const YAML::Node& node) const {
    if (node.IsDefined()) {
        const YAML::Mark m = node.Mark();
        if (!m.is_null()) return m;
    }
    return mark_;
}

const ValueOrigin* YamlOptions::origin_for(const YAML::Node& node, const std::string& full_key) const {
    if (const ValueOrigin* o = origin_of(full_key)) return o;
    // A key missing from a map that an override wrote ("model.position.k=4" creating model.position, which
    // then lacks `type`): the override is the place to point at.
    const bool node_has_mark = node.IsDefined() && !node.Mark().is_null();
    if (!node_has_mark && !own_mark_) return origin_of(key_);
    return nullptr;
}

std::string YamlOptions::location(const YAML::Node& node, const std::string& full_key) const {
    if (const ValueOrigin* o = origin_for(node, full_key)) return o->location;
    const YAML::Mark m = mark_of(node);
    if (m.is_null()) return file_;
    return fmt::format("{}:{}:{}", file_, m.line + 1, m.column + 1);
}

void YamlOptions::fail_at(const YAML::Node& node, const std::string& full_key, const std::string& what) const {
    const ValueOrigin* o = origin_for(node, full_key);
    const std::string where = location(node, full_key);
    // The key and the explanation quote the user's text (a scalar, a key, a path): its control bytes
    // and stray bytes are shown escaped, never raw (printable changes nothing that is escaped already).
    if (full_key.empty()) throw nn::OptionError(nn::printable(fmt::format("{}: {}", where, what)));
    throw nn::OptionError(nn::printable(fmt::format("{}: {}{}: {}", where, o ? o->shown_prefix : "", full_key, what)));
}

void YamlOptions::fail(const std::string& key, const std::string& what) {
    const Entry* e = find(key);
    fail_at(e ? e->value : YAML::Node(), key_path(key), what);
}

bool YamlOptions::has(const std::string& key) const { return find(key) != nullptr; }

std::vector<std::string> YamlOptions::keys() const {
    std::vector<std::string> out;
    for (const auto& e : entries_) out.push_back(e.name);
    return out;
}

namespace {
thread_local KeyRecorder* g_recorder = nullptr;

std::string list_text(const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
    return "[" + s + "]";
}
}  // namespace

KeyRecorder::KeyRecorder() { g_recorder = this; }
KeyRecorder::~KeyRecorder() { g_recorder = nullptr; }

void YamlOptions::record(const std::string& key, const char* type, std::string def, std::string allowed) const {
    if (!g_recorder) return;
    const std::string full = key_path(key);
    for (const auto& k : g_recorder->keys)
        if (k.key == full) return;
    g_recorder->keys.push_back(KeyRecord{full, type, std::move(def), std::move(allowed)});
}

long YamlOptions::get_int(const std::string& key, long def, long min, long max) {
    record(key, "int", std::to_string(def), trim_range(int_range_text(min, max)));
    used_.insert(key);
    const Entry* e = find(key);
    if (!e) return def;
    const std::string expect = "must be an integer" + int_range_text(min, max);
    long v = 0;
    bool overflow = false;
    if (!e->value.IsScalar() || !parse_long(e->value.Scalar(), v, overflow))
        fail_at(e->value, key_path(key), fmt::format("{}, got {}", expect, describe_node(e->value)));
    if (overflow || v < min || v > max) fail_at(e->value, key_path(key), fmt::format("{}, got {}", expect, e->value.Scalar()));
    return v;
}

double YamlOptions::get_number(const std::string& key, double def, double min, double max, bool min_open,
                               bool max_open) {
    record(key, "number", fmt::format("{}", def), trim_range(number_range_text(min, max, min_open, max_open)));
    used_.insert(key);
    const Entry* e = find(key);
    if (!e) return def;
    const std::string expect = "must be a number" + number_range_text(min, max, min_open, max_open);
    double v = 0;
    if (!e->value.IsScalar() || !parse_double(e->value.Scalar(), v))
        fail_at(e->value, key_path(key), fmt::format("{}, got {}", expect, describe_node(e->value)));
    const bool ok = std::isfinite(v) && (min_open ? v > min : v >= min) && (max_open ? v < max : v <= max);
    if (!ok) fail_at(e->value, key_path(key), fmt::format("{}, got {}", expect, e->value.Scalar()));
    return v;
}

double YamlOptions::get_double(const std::string& key, double def, double min, double max) {
    return get_number(key, def, min, max, false, false);
}

bool YamlOptions::get_bool(const std::string& key, bool def) {
    record(key, "bool", def ? "true" : "false", "");
    used_.insert(key);
    const Entry* e = find(key);
    if (!e) return def;
    bool v = false;
    if (!e->value.IsScalar() || !parse_bool(e->value.Scalar(), v))
        fail_at(e->value, key_path(key), fmt::format("must be true or false, got {}", describe_node(e->value)));
    return v;
}

std::string YamlOptions::get_string(const std::string& key, const std::string& def,
                                    const std::vector<std::string>& allowed) {
    record(key, "string", def, allowed.empty() ? "" : "one of " + join(allowed));
    used_.insert(key);
    const Entry* e = find(key);
    if (!e) return def;
    if (!e->value.IsScalar()) {
        const std::string expect = allowed.empty() ? "must be a string" : "must be one of " + join(allowed);
        fail_at(e->value, key_path(key), fmt::format("{}, got {}", expect, describe_node(e->value)));
    }
    const std::string& v = e->value.Scalar();
    if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), v) == allowed.end())
        fail_at(e->value, key_path(key), not_allowed(v, allowed));
    return v;
}

std::string YamlOptions::require_string(const std::string& key, const std::string& what_it_is) {
    record(key, "string", "(required)", "");
    if (!has(key)) {
        used_.insert(key);
        fail_at(YAML::Node(), key_path(key), fmt::format("is required ({})", what_it_is));
    }
    return get_string(key, "");
}

std::vector<std::string> YamlOptions::get_string_list(const std::string& key, const std::vector<std::string>& def,
                                                      const std::vector<std::string>& allowed) {
    record(key, "list of strings", list_text(def), allowed.empty() ? "" : "each one of " + join(allowed));
    used_.insert(key);
    const Entry* e = find(key);
    if (!e) return def;
    const std::string full = key_path(key);
    if (!e->value.IsSequence()) {
        const std::string expect = allowed.empty() ? "must be a list of strings, e.g. [a, b]"
                                                   : "must be a list of values from " + join(allowed);
        fail_at(e->value, full, fmt::format("{}, got {}", expect, describe_node(e->value)));
    }
    std::vector<std::string> out;
    for (std::size_t i = 0; i < e->value.size(); ++i) {
        const YAML::Node item = e->value[i];
        const std::string item_key = fmt::format("{}[{}]", full, i);
        if (!item.IsScalar()) {
            const std::string expect = allowed.empty() ? "must be a string" : "must be one of " + join(allowed);
            fail_at(item, item_key, fmt::format("{}, got {}", expect, describe_node(item)));
        }
        if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), item.Scalar()) == allowed.end())
            fail_at(item, item_key, not_allowed(item.Scalar(), allowed));
        // a name twice (a metric, a split) would be computed, written and reported twice under one name
        if (const auto at = std::find(out.begin(), out.end(), item.Scalar()); at != out.end())
            fail_at(item, item_key, fmt::format("'{}' is already {}[{}]; name each once", item.Scalar(), full,
                                                at - out.begin()));
        out.push_back(item.Scalar());
    }
    return out;
}

std::vector<long> YamlOptions::get_int_list(const std::string& key, const std::vector<long>& def, long min, long max) {
    std::vector<std::string> d;
    for (long v : def) d.push_back(std::to_string(v));
    record(key, "list of ints", list_text(d), trim_range(int_range_text(min, max)));
    used_.insert(key);
    const Entry* e = find(key);
    if (!e) return def;
    const std::string full = key_path(key);
    const std::string expect = "must be an integer" + int_range_text(min, max);
    if (!e->value.IsSequence())
        fail_at(e->value, full, fmt::format("must be a list of integers, e.g. [1, 2], got {}", describe_node(e->value)));
    std::vector<long> out;
    for (std::size_t i = 0; i < e->value.size(); ++i) {
        const YAML::Node item = e->value[i];
        const std::string item_key = fmt::format("{}[{}]", full, i);
        long v = 0;
        bool overflow = false;
        if (!item.IsScalar() || !parse_long(item.Scalar(), v, overflow))
            fail_at(item, item_key, fmt::format("{}, got {}", expect, describe_node(item)));
        if (overflow || v < min || v > max) fail_at(item, item_key, fmt::format("{}, got {}", expect, item.Scalar()));
        out.push_back(v);
    }
    return out;
}

YamlOptions YamlOptions::section(const std::string& key) {
    record(key, "map", "", "");
    used_.insert(key);
    const Entry* e = find(key);
    if (!e) return YamlOptions(YAML::Node(), file_, key_path(key), origins_, mark_);
    return YamlOptions(e->value, file_, key_path(key), origins_, mark_of(e->value));
}

YAML::Node YamlOptions::get_node(const std::string& key) {
    record(key, "any", "", "");
    used_.insert(key);
    const Entry* e = find(key);
    return e ? e->value : YAML::Node();
}

void YamlOptions::finish() {
    const std::vector<std::string> known(used_.begin(), used_.end());
    for (const auto& e : entries_) {
        if (used_.count(e.name)) continue;
        std::string what = "unknown key";
        if (auto s = nn::did_you_mean(e.name, known))
            what += fmt::format(" (did you mean '{}'?)", *s);
        else if (known.empty())
            what += " (no keys are read here)";
        else
            what += fmt::format(" (known keys: {})", join(known));
        fail_at(e.key_node, key_path(e.name), what);
    }
}

}  // namespace relpos
