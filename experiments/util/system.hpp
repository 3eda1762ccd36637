// What relpos asks of the machine it runs on.
#pragma once

#include <string>

namespace relpos {

double physical_memory_bytes();  // 1e12 when the system does not say
std::string host_name();         // "this machine" when the system does not say
std::string now_iso();           // the time now, UTC, ISO 8601 ("2026-11-26T17:20:00Z")

}  // namespace relpos
