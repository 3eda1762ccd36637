// libFuzzer target for the report's reader of finished runs (`make fuzz FUZZ_TARGET=report`;
// docs/reliability.md).
//
// Input: the bytes of a run's results.json, optionally followed by a NUL byte and its metrics.jsonl.
// They are written as the one run of a fixed experiment directory (an experiment.yaml with a report
// section: rows, a baseline, bootstrap off) and read by build_report, then rendered as Markdown, CSV
// and JSON; the metrics.jsonl goes through read_learning_curve (what the plots draw; gnuplot itself, a
// separate process, is left out). The documented user errors (ConfigError,
// CheckpointError, DataError: a results.json that is not a finished run's object) are the expected
// outcome for most inputs; anything else -- another exception, a crash, a sanitizer report, a hang --
// is a bug. The seeds are the committed results.json and metrics.jsonl files of results/.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "fuzz/common.hpp"
#include "experiments/config/config.hpp"
#include "experiments/data/corpus.hpp"
#include "experiments/report/report.hpp"
#include "experiments/train/checkpoint.hpp"

namespace fs = std::filesystem;

namespace {

const char* const kExperiment = R"(name: fuzz_report
data: {task: copy, synthetic: {n_symbols: 8, train_size: 10, valid_size: 4, test_size: 4}}
model: {d_model: 16, heads: 2, d_ff: 32, encoder_layers: 1, decoder_layers: 1}
eval: {splits: [val, test], metrics: [accuracy, loss]}
sweep:
  grid:
    seed: [1, 2]
    model.position: [{type: sinusoidal}, {type: shaw, k: 2}]
report:
  rows: model.position
  baseline: "{type: sinusoidal}"
  bootstrap: 0
  metrics: [test.accuracy, val.loss, test.accuracy@5]
)";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string input(reinterpret_cast<const char*>(data), size);
    const auto nul = input.find('\0');
    const fs::path dir = fs::path(relpos::fuzz::work_dir()) / "exp";
    static const bool written = [&] {
        fs::create_directories(dir);
        std::ofstream(dir / "experiment.yaml") << kExperiment;
        return true;
    }();
    (void)written;
    const fs::path run = dir / "runs" / "seed=1_position=type-sinusoidal";
    fs::remove_all(dir / "runs");
    fs::create_directories(run);
    std::ofstream(run / "results.json", std::ios::binary) << input.substr(0, nul);
    if (nul != std::string::npos) std::ofstream(run / "metrics.jsonl", std::ios::binary) << input.substr(nul + 1);
    try {
        const relpos::ReportTables t = relpos::build_report(dir.string());
        (void)relpos::render_markdown(t);
        (void)relpos::render_csv(t);
        (void)relpos::render_json(t);
    } catch (const relpos::ConfigError&) {
    } catch (const relpos::CheckpointError&) {
    } catch (const relpos::DataError&) {
    }
    try {
        (void)relpos::read_learning_curve((run / "metrics.jsonl").string());
    } catch (const relpos::ConfigError&) {
    } catch (const relpos::CheckpointError&) {
    } catch (const relpos::DataError&) {
    }
    return 0;
}
