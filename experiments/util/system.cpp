#include "experiments/util/system.hpp"

#include <unistd.h>

#include <ctime>

namespace relpos {

double physical_memory_bytes() {
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && page > 0 ? double(pages) * double(page) : 1e12;
}

std::string host_name() {
    char h[256] = {0};
    return ::gethostname(h, sizeof h - 1) == 0 ? std::string(h) : std::string("this machine");
}

std::string now_iso() {
    std::time_t t = std::time(nullptr);
    char buf[32];
    std::tm tm{};
    gmtime_r(&t, &tm);  // not std::gmtime: --jobs logs from several threads at once
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

}  // namespace relpos
