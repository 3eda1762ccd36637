// Run identity: which options name a run. A run is matched to a config by its config hash (config_hash,
// experiments/config/write.cpp), and in a run store named by run_identity.
#pragma once

#include <string>

#include "experiments/config/config.hpp"

namespace relpos {

// The name of a run in a run_store: config_hash with every position option resolved to its value
// (defaults written out), so two experiments that write the same model differently share the run. An
// option declared with Options::omit_from_run_name_at is left out at that value (runs finished before the
// option existed keep their names), and an encoding that adds nothing names the run of {type: none}.
std::string run_identity(const ExperimentConfig& cfg);

// One model.position entry with every option of its encoding at its value (defaults written out), options
// left out of run names at their declared value dropped: what run_identity names the run by. A fresh node
// (the spec's own is not touched).
YAML::Node resolved_position(const PositionSpec& spec);

// Whether a run recorded with config hash `recorded` is this config's run: the same config, or one that
// run_identity names the same (the same computation, e.g. Shaw with neither term and no positions).
bool same_run(const std::string& recorded, const ExperimentConfig& cfg);

}  // namespace relpos
