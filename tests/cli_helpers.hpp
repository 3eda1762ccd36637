// Helpers for tests that drive the relpos binary.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace relpos::test {

inline const std::string kRelposBin = std::string(RELPOS_BINARY_DIR) + "/relpos";

struct Cmd {
    int code;         // exit code, or 128 + signal
    std::string out;  // stdout and stderr together
};

// Runs a shell command, capturing its output.
inline Cmd sh(const std::string& cmd) {
    std::string out;
    FILE* p = popen((cmd + " 2>&1").c_str(), "r");
    char buf[4096];
    while (p && fgets(buf, sizeof buf, p)) out += buf;
    const int st = p ? pclose(p) : -1;
    return {WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st), out};
}

}  // namespace relpos::test
