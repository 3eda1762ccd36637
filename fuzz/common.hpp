// What the libFuzzer targets (fuzz/fuzz_*.cpp) share: a private directory for the files they write (the
// readers under test take paths, not bytes), removed at exit, and the way a finding is reported.
#pragma once

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

namespace relpos::fuzz {

// A plain char array: it must outlive the static destructors that run before the atexit handler.
inline char g_work_dir[] = "/tmp/relpos-fuzz-XXXXXX";

inline std::string work_dir() {
    static const bool made = [] {
        if (!mkdtemp(g_work_dir)) std::abort();
        std::atexit([] {
            std::error_code ec;
            std::filesystem::remove_all(g_work_dir, ec);
        });
        return true;
    }();
    (void)made;
    return g_work_dir;
}

// A finding that is not a crash or sanitizer report: print it and abort, so libFuzzer saves the input.
[[noreturn]] inline void bug(const char* target, const std::string& what) {
    std::fprintf(stderr, "%s: %s\n", target, what.c_str());
    std::abort();
}

}  // namespace relpos::fuzz
