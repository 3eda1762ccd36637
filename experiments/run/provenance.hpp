// Where results came from: the commit the binary was built from and the machine that ran it (results.json).
#pragma once

#include <string>

namespace relpos {

// Which code made the results (git commit, or "unknown" outside a checkout).
std::string source_commit();
std::string machine_description();

}  // namespace relpos
