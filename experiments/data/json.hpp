// JSON files relpos writes and reads (results.json, metrics.jsonl, report.json, a checkpoint's state.json
// and manifest.json), through nlohmann-json, so that escaping, number formatting and parsing are right by
// construction. Objects keep their keys in the order they were written (ordered_json).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace relpos {

using Json = nlohmann::ordered_json;

// v rounded to `decimals` digits after the point, as a JSON number (written in its shortest form: 0.45,
// not 0.4500); null when v is NaN or infinite, which JSON cannot hold (a bare inf or -nan made
// metrics.jsonl and results.json unreadable).
Json json_number(double v, int decimals);
// v rounded to `digits` significant digits (a learning rate such as 1.875e-05); null when not finite.
Json json_significant(double v, int digits);

// A value as one line (a metrics.jsonl line) or as an indented document ending in a newline (a file).
std::string json_line(const Json& j);
std::string json_document(const Json& j);

// Parses text; on malformed JSON throws E with "<what> is not valid JSON (<the parser's message>)".
// `what` names the file (or the file and line) for the message.
template <class E>
Json parse_json_or_throw(const std::string& text, const std::string& what) {
    try {
        return Json::parse(text);
    } catch (const nlohmann::json::exception& e) {
        // A syntax error, or a number beyond a double (1e400: out_of_range.406; found by the fuzzer).
        // e.what() reads "[json.exception.parse_error.101] parse error at line 1, column 2: ..."
        std::string msg = e.what();
        const auto pos = msg.find("] ");
        throw E(what + " is not valid JSON (" + (pos == std::string::npos ? msg : msg.substr(pos + 2)) + ")");
    }
}

// Whether j is an array whose every element is a string ([] included): a list of names in a file we read
// (state.json's machines, results.json's trained_on).
bool is_string_list(const Json& j);

// The whole text of a file ("" when it cannot be opened: callers check that it exists first).
std::string read_text_file(const std::string& path);

}  // namespace relpos
