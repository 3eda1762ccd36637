// How a plug-in (a position encoding, a synthetic task) reads and validates its own options without
// nn/ depending on YAML: experiments/ implements Options over a YAML node (errors then name the file,
// line and column); MapOptions below serves code and tests.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace relpos::nn {

// A user error in options: the message is one sentence naming the key and what is allowed.
struct OptionError : std::invalid_argument {
    using std::invalid_argument::invalid_argument;
};

class Options {
public:
    virtual ~Options() = default;
    // Each getter marks the key as known; a missing key gives the default. Values out of range or of
    // the wrong type throw OptionError naming the key and what is allowed.
    virtual long get_int(const std::string& key, long def, long min, long max) = 0;
    virtual double get_double(const std::string& key, double def, double min, double max) = 0;
    virtual bool get_bool(const std::string& key, bool def) = 0;
    virtual std::string get_string(const std::string& key, const std::string& def,
                                   const std::vector<std::string>& allowed = {}) = 0;
    virtual bool has(const std::string& key) const = 0;
    // Throws OptionError for the first key no getter asked for (with a did-you-mean when close).
    virtual void finish() = 0;
    // Throws OptionError about `key` with the given explanation (for checks across options).
    [[noreturn]] virtual void fail(const std::string& key, const std::string& what) = 0;
    // Declares, next to the getter of an option added after runs were finished, the value at which the
    // option is left out of a run's name (the computation those runs did), so that they keep their names.
    // Only describe_position_options records it (OptionDoc::omit_from_run_name_at); reading ignores it.
    virtual void omit_from_run_name_at(const std::string& key, const std::string& value) {}
    // Declares an option that changes only how a trained model is evaluated (no parameter, nothing a
    // checkpoint holds): `relpos eval --run` may override it. Recorded like omit_from_run_name_at
    // (OptionDoc::evaluation_only); reading ignores it.
    virtual void evaluation_only(const std::string& key) {}
};

// Options from a string map (values parsed on demand). Used in code and tests.
class MapOptions : public Options {
public:
    MapOptions() = default;
    MapOptions(std::map<std::string, std::string> m, std::string where = "options")
        : m_(std::move(m)), where_(std::move(where)) {}
    long get_int(const std::string& key, long def, long min, long max) override;
    double get_double(const std::string& key, double def, double min, double max) override;
    bool get_bool(const std::string& key, bool def) override;
    std::string get_string(const std::string& key, const std::string& def,
                           const std::vector<std::string>& allowed = {}) override;
    bool has(const std::string& key) const override { return m_.count(key) > 0; }
    void finish() override;
    [[noreturn]] void fail(const std::string& key, const std::string& what) override;

private:
    std::map<std::string, std::string> m_;
    std::string where_;
    std::set<std::string> used_;
};

// The closest candidate by edit distance, if close enough to suggest ("did you mean ...?").
std::optional<std::string> did_you_mean(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace relpos::nn
