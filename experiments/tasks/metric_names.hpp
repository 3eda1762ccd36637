// Metric names more than one part of relpos reads. The language model's loss by position,
// `loss_pos<N>@<p>` (the mean loss at positions p.. of non-overlapping windows of N tokens), is written by
// the language-model task, checked in report.metrics by the config schema, counted apart in the runner's
// log line and drawn against the position (not a length) by the plots: one definition here keeps the four
// from drifting.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace relpos::metric_names {

inline constexpr std::string_view kLossByPosition = "loss_pos";

// "loss_pos<window>@<position>"
inline std::string loss_by_position(std::size_t window, std::size_t position) {
    return fmt::format("{}{}@{}", kLossByPosition, window, position);
}

// Whether a metric name (without its split prefix; with or without its "@p") is one.
inline bool is_loss_by_position(const std::string& name) {
    return std::string_view(name).substr(0, kLossByPosition.size()) == kLossByPosition;
}

// The window N of a base name "loss_pos<N>" (no "@p"); 0 when the name is not of that form.
inline std::size_t loss_by_position_window(const std::string& base) {
    if (base.size() <= kLossByPosition.size() || !is_loss_by_position(base) ||
        base.find_first_not_of("0123456789", kLossByPosition.size()) != std::string::npos)
        return 0;
    return static_cast<std::size_t>(std::stoul(base.substr(kLossByPosition.size())));
}

// A metric measured at a length, "<split>.<metric>@<n>" ("test.ppl@1024", "test.loss_pos1024@64"): the
// split ("test"; empty without a dot before the '@'), the metric ("ppl"), the family ("test.ppl": the name
// up to the '@') and n. Read by the report's tables (cells by length, pairs by position) and its plots.
struct AtLength {
    std::string split, metric, family;
    double n = 0;
};

// The parts of a metric name that ends in "@<number>"; nullopt for any other name ("test.bleu",
// "test.ppl@mean").
inline std::optional<AtLength> at_length(const std::string& name) {
    const auto at = name.rfind('@');
    if (at == std::string::npos || at + 1 == name.size()) return std::nullopt;
    char* end = nullptr;
    const double n = std::strtod(name.c_str() + at + 1, &end);
    if (*end != '\0') return std::nullopt;
    AtLength a;
    a.family = name.substr(0, at);
    const auto dot = a.family.find('.');
    a.split = dot == std::string::npos ? "" : a.family.substr(0, dot);
    a.metric = dot == std::string::npos ? a.family : a.family.substr(dot + 1);
    a.n = n;
    return a;
}

}  // namespace relpos::metric_names
