// Metric names more than one part of relpos reads. The language model's loss by position,
// `loss_pos<N>@<p>` (the mean loss at positions p.. of non-overlapping windows of N tokens), is written by
// the language-model task, checked in report.metrics by the config schema, counted apart in the runner's
// log line and drawn against the position (not a length) by the plots: one definition here keeps the four
// from drifting.
#pragma once

#include <cstddef>
#include <string>

#include <fmt/format.h>

namespace relpos::metric_names {

inline constexpr const char* kLossByPosition = "loss_pos";
inline constexpr std::size_t kLossByPositionLength = 8;  // strlen(kLossByPosition)

// "loss_pos<window>@<position>"
inline std::string loss_by_position(std::size_t window, std::size_t position) {
    return fmt::format("{}{}@{}", kLossByPosition, window, position);
}

// Whether a metric name (with or without its "@p", with or without a split prefix stripped) is one.
inline bool is_loss_by_position(const std::string& name) {
    return name.compare(0, kLossByPositionLength, kLossByPosition) == 0;
}

// The window N of a base name "loss_pos<N>" (no "@p"); 0 when the name is not of that form.
inline std::size_t loss_by_position_window(const std::string& base) {
    if (base.size() <= kLossByPositionLength || !is_loss_by_position(base) ||
        base.find_first_not_of("0123456789", kLossByPositionLength) != std::string::npos)
        return 0;
    return static_cast<std::size_t>(std::stoul(base.substr(kLossByPositionLength)));
}

}  // namespace relpos::metric_names
