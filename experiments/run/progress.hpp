// Progress on long work: a live status line on a terminal, plain periodic lines otherwise
// (logs, CI, nohup), and messages that never get mixed into the live line.
#pragma once

#include <chrono>
#include <mutex>
#include <string>

namespace relpos {

std::string format_duration(double seconds);  // "1h02m", "4m05s", "12s"

class Progress {
public:
    explicit Progress(bool quiet = false);
    void message(const std::string& line);  // a permanent line
    void status(const std::string& line);   // the live line (rate-limited when not a terminal)
    void finish();

private:
    bool tty_, quiet_;
    bool live_ = false;
    std::chrono::steady_clock::time_point last_plain_;
    std::mutex mu_;
};

}  // namespace relpos
