// Inside the config layer: the pieces its files share (dotted keys, reading a parsed tree). Not for
// the rooms above, which use config.hpp.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "experiments/config/config.hpp"

namespace relpos {

// ---- dotted keys: name(.name)* where each name may carry list indices, e.g. model.position[1].k.
// "sweep.grid.<key>" is special: the grid's own keys are dotted, so everything after "sweep.grid." is
// one map key.
struct KeyPart {
    std::string name;
    std::vector<std::size_t> indices;
};
bool is_name_char(char ch);
std::optional<std::vector<KeyPart>> split_key(const std::string& key);
extern const char* const kKeyExample;

// Run-name compatibility of a config key, declared where the key is read (schema.cpp): a key added after
// runs were finished is left out of the text config_hash reads (write.cpp) at the value that computes what
// those runs computed, so that they keep their names. The dotted key ("model.family") -> that value.
void omit_from_run_name_at(const YamlOptions& o, const std::string& key, const std::string& value);
// Whether `value` is the declared value of `dotted_key` (false for a key that declares none).
bool at_run_name_default(const std::string& dotted_key, const std::string& value);

// Reads and validates a parsed config (schema.cpp): every section's keys, then the rules across keys.
ExperimentConfig parse_tree(const YAML::Node& root, const std::string& file,
                            const std::shared_ptr<const ValueOrigins>& origins, const LoadFlags& flags);

}  // namespace relpos
