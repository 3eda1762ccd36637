// Metric names more than one part of relpos reads. The language model's loss by position,
// `loss_pos<N>@<p>` (the mean loss at positions p.. of non-overlapping windows of N tokens), is written by
// the language-model task, checked in report.metrics by the config schema, counted apart in the runner's
// log line and drawn against the position (not a length) by the plots: one definition here keeps the four
// from drifting.
#pragma once

#include <cstddef>
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

}  // namespace relpos::metric_names
