// nn::Options over a YAML map, so that a plug-in's option errors (and the config layer's own) name the
// file, line, column and full dotted key: "configs/x.yaml:12:8: model.position.k: must be ...".
// The config layer reads every section through this class too, so both report errors identically.
#pragma once

#include <memory>
#include <set>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "nn/options.hpp"

namespace relpos {

// A value that is not part of the config file's own text: a command-line override or a sweep grid
// value written into the parsed tree before validation. Messages about it (or anything under it) name
// where it really came from, not the line it was pasted into.
struct ValueOrigin {
    std::string key;           // dotted key it was written to: "model.dropout", "model.position[0].k"
    std::string location;      // printed instead of file:line:col: "command-line override 'model.dropout=1.5'"
    std::string shown_prefix;  // put before the dotted key in messages: "" or "sweep.grid."
};
using ValueOrigins = std::vector<ValueOrigin>;

// True when one dotted key is the other or lies under it ("model" / "model.position[1].k").
bool key_contains(const std::string& outer, const std::string& inner);
// How a YAML value reads in a message: 'text', a list, a map, no value.
std::string describe_node(const YAML::Node& node);

// ---- the schema, as the reading code declares it
// While a KeyRecorder lives (on this thread), every getter of every YamlOptions records the key it reads:
// the full dotted key, its type, its default and what is allowed. Reading a config of defaults under a
// recorder (describe_config_keys in config.hpp) lists every key the config layer knows from the one
// place each is declared, its read_* call; `relpos list --keys`, docs/configs.md and the fuzzer's
// dictionary are derived from or checked against that list.
struct KeyRecord {
    std::string key;            // "data.synthetic.n_symbols"
    std::string type;           // int, number, bool, string, list of strings, list of ints, map, any
    std::string default_value;  // as YAML would write it ("" for an empty string)
    std::string allowed;        // "in [1, 64000]", "one of unigram, bpe", ""
};
class KeyRecorder {
public:
    KeyRecorder();
    ~KeyRecorder();
    KeyRecorder(const KeyRecorder&) = delete;
    KeyRecorder& operator=(const KeyRecorder&) = delete;
    std::vector<KeyRecord> keys;  // in reading order, each key once
};

class YamlOptions : public nn::Options {
public:
    // `node` must be a map, or null/undefined (read as an empty map). `file` names the config file,
    // `key` the dotted key of `node` ("" for the top level, "model.position[1]" for one encoding).
    // `fallback` is the location used for keys that are missing when `node` itself has no position.
    // Throws nn::OptionError (located) for a non-map node, a duplicate key or a key that is not a name.
    YamlOptions(YAML::Node node, std::string file, std::string key = "",
                std::shared_ptr<const ValueOrigins> origins = nullptr, YAML::Mark fallback = YAML::Mark::null_mark());

    // ---- nn::Options (ranges are inclusive; +-max or +-infinity mean "no bound")
    long get_int(const std::string& key, long def, long min, long max) override;
    double get_double(const std::string& key, double def, double min, double max) override;
    bool get_bool(const std::string& key, bool def) override;
    std::string get_string(const std::string& key, const std::string& def,
                           const std::vector<std::string>& allowed = {}) override;
    bool has(const std::string& key) const override;
    void finish() override;
    [[noreturn]] void fail(const std::string& key, const std::string& what) override;

    // ---- extras used by the config layer (and free for plug-ins)
    // A number with optionally open bounds: dropout is [0, 1) = (0, 1, false, true); lr > 0 is
    // (0, inf, true, false).
    double get_number(const std::string& key, double def, double min, double max, bool min_open, bool max_open);
    // A required string: missing gives "is required (<what_it_is>)".
    std::string require_string(const std::string& key, const std::string& what_it_is);
    std::vector<std::string> get_string_list(const std::string& key, const std::vector<std::string>& def,
                                             const std::vector<std::string>& allowed = {});
    std::vector<long> get_int_list(const std::string& key, const std::vector<long>& def, long min, long max);
    // Options for a nested map (missing or null = empty map); its keys are "<this key>.<key>.*".
    YamlOptions section(const std::string& key);
    // The raw value (marks the key as read); a null node when absent.
    YAML::Node get_node(const std::string& key);
    // Marks a key as read without reading it (e.g. `type`, read by whoever picked the plug-in).
    void mark_used(const std::string& key) { used_.insert(key); }
    // Declares a key read by custom code (a [min, max] pair, a list of maps): marks it as read and records
    // its type, default and allowed values for KeyRecorder, as the typed getters do by themselves.
    void declare(const std::string& key, const char* type, std::string def, std::string allowed) {
        record(key, type, std::move(def), std::move(allowed));
        used_.insert(key);
    }
    // Keys present, in file order.
    std::vector<std::string> keys() const;
    // Full dotted key of a child ("model.position.k") and of this map ("model.position").
    std::string key_path(const std::string& key) const;
    const std::string& path() const { return key_; }
    const std::string& file() const { return file_; }
    // True when the value of `key` (or something above or under it) came from an override or a sweep.
    bool from_override(const std::string& key) const;
    // Throws OptionError "<where>: <full_key>: <what>", located at `node` (or this map when it has none).
    [[noreturn]] void fail_at(const YAML::Node& node, const std::string& full_key, const std::string& what) const;
    // Where `node` (under `full_key`) came from: "file:line:col", or an override's description.
    std::string location(const YAML::Node& node, const std::string& full_key) const;

private:
    struct Entry {
        std::string name;
        YAML::Node key_node;
        YAML::Node value;
    };
    const Entry* find(const std::string& key) const;
    const ValueOrigin* origin_of(const std::string& full_key) const;
    const ValueOrigin* origin_for(const YAML::Node& node, const std::string& full_key) const;
    YAML::Mark mark_of(const YAML::Node& node) const;
    void record(const std::string& key, const char* type, std::string def, std::string allowed) const;

    YAML::Node node_;
    std::string file_;
    std::string key_;
    std::shared_ptr<const ValueOrigins> origins_;
    YAML::Mark mark_;  // where this map is (or its parent, when it is missing from the file)
    bool own_mark_ = false;  // whether the map itself has a place in the file (else it was missing or overridden)
    std::vector<Entry> entries_;
    std::set<std::string> used_;
};

}  // namespace relpos
