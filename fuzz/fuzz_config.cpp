// libFuzzer target for the config loader (`make fuzz`; docs/reliability.md).
//
// Input: the bytes of a YAML config file, optionally followed by a NUL byte and command-line overrides,
// one per line. The file goes through load_config (with the overrides), expand_sweep, to_yaml and
// config_hash, and each override also through parse_override on its own. The documented user errors
// (ConfigError, nn::OptionError, DataError) are the expected outcome for most inputs; anything else --
// another exception, a crash, a sanitizer report, a hang -- is a bug. For configs that load, the
// resolved YAML must load back to the same config_hash (docs/configs.md, "Saved configs").
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "fuzz/common.hpp"
#include "experiments/config/config.hpp"
#include "experiments/data/corpus.hpp"
#include "experiments/run/sweep.hpp"
#include "nn/options.hpp"

namespace {

void write_file(const std::string& path, const std::string& text) {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f << text;
    if (!f) std::abort();
}

// Runs f; the documented user errors are fine, everything else escapes (and libFuzzer reports it).
template <class F>
bool user_error_ok(F&& f) {
    try {
        f();
        return true;
    } catch (const relpos::ConfigError&) {
    } catch (const relpos::nn::OptionError&) {
    } catch (const relpos::DataError&) {
    }
    return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string input(reinterpret_cast<const char*>(data), size);
    const auto nul = input.find('\0');
    const std::string yaml = input.substr(0, nul);
    std::vector<std::string> overrides;
    if (nul != std::string::npos) {
        std::size_t start = nul + 1;
        while (start <= input.size() && overrides.size() < 8) {
            auto end = input.find('\n', start);
            if (end == std::string::npos) end = input.size();
            overrides.push_back(input.substr(start, end - start));
            start = end + 1;
        }
    }

    for (const auto& o : overrides) user_error_ok([&] { relpos::parse_override(o); });

    const std::string path = relpos::fuzz::work_dir() + "/config.yaml";
    write_file(path, yaml);
    relpos::ExperimentConfig cfg;
    if (!user_error_ok([&] { cfg = relpos::load_config(path, overrides); })) return 0;

    // Every sweep point is a full config load: keep the fuzzer fast by expanding small sweeps only.
    double points = cfg.sweep.seeds.empty() ? 1.0 : double(cfg.sweep.seeds.size());
    for (const auto& axis : cfg.sweep.grid) points *= double(axis.values.size());
    if (points <= 64) {
        user_error_ok([&] {
            for (const auto& p : relpos::expand_sweep(cfg, path, overrides)) {
                if (p.id.empty()) relpos::fuzz::bug("fuzz_config", "a sweep point with an empty run id");
                (void)relpos::config_hash(p.config);
            }
        });
    }

    // The resolved config loads back to the same hash (a saved run's config.yaml must be readable).
    const std::string round = relpos::fuzz::work_dir() + "/round.yaml";
    write_file(round, relpos::to_yaml(cfg));
    relpos::ExperimentConfig again;
    try {
        again = relpos::load_config(round);
    } catch (const std::exception& e) {
        relpos::fuzz::bug("fuzz_config", std::string("to_yaml wrote a config that does not load back: ") + e.what() +
                                             "\n" + relpos::to_yaml(cfg));
    }
    if (relpos::config_hash(again) != relpos::config_hash(cfg))
        relpos::fuzz::bug("fuzz_config", "to_yaml round trip changed config_hash:\n" + relpos::to_yaml(cfg) + "---\n" + relpos::to_yaml(again));
    return 0;
}
