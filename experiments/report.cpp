#include <fmt/format.h>

#include "experiments/commands.hpp"

namespace relpos {

int cmd_report(const std::string& dir) {
    fmt::print(stderr, "relpos report: not written yet\n");
    return 1;
}

}  // namespace relpos
