#include "experiments/run/progress.hpp"

#include <unistd.h>

#include <cstdio>

#include <fmt/format.h>

namespace relpos {

std::string format_duration(double s) {
    if (!(s >= 0) || s > 1e8) return "?";
    const long t = static_cast<long>(s + 0.5);
    if (t >= 3600) return fmt::format("{}h{:02d}m", t / 3600, (t % 3600) / 60);
    if (t >= 60) return fmt::format("{}m{:02d}s", t / 60, t % 60);
    return fmt::format("{}s", t);
}

Progress::Progress(bool quiet)
    : tty_(isatty(fileno(stderr)) != 0), quiet_(quiet), last_plain_(std::chrono::steady_clock::now() - std::chrono::hours(1)) {}

void Progress::message(const std::string& line) {
    std::lock_guard<std::mutex> lk(mu_);
    if (tty_ && live_) std::fputs("\r\033[K", stderr);
    live_ = false;
    std::fprintf(stderr, "%s\n", line.c_str());
    std::fflush(stderr);
}

void Progress::status(const std::string& line) {
    if (quiet_) return;
    std::lock_guard<std::mutex> lk(mu_);
    if (tty_) {
        std::fprintf(stderr, "\r\033[K%s", line.c_str());
        live_ = true;
    } else {
        const auto now = std::chrono::steady_clock::now();
        if (now - last_plain_ < std::chrono::seconds(30)) return;
        last_plain_ = now;
        std::fprintf(stderr, "%s\n", line.c_str());
    }
    std::fflush(stderr);
}

void Progress::finish() {
    std::lock_guard<std::mutex> lk(mu_);
    if (tty_ && live_) std::fputs("\n", stderr);
    live_ = false;
}

}  // namespace relpos
