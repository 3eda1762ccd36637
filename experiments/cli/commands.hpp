// The `relpos` subcommands other than run (experiments/run/experiment.hpp) and report (experiments/report).
#pragma once

#include <string>

#include "experiments/tasks/task.hpp"  // reads_tokenized_text

namespace relpos {

// How eval and translate read their text (--input). A run of a task that reads tokenized text
// (reads_tokenized_text: TaskEntry::tokenized_text with data.tokenized) reads lowercased Moses-tokenized
// text: raw sentences are first normalized like the bundled files; tokenized text is used as it is. Runs
// on raw text or on id-level tasks read every line unchanged either way.
enum class InputForm { Raw, Tokenized };

// "raw" or "tokenized"; anything else throws ConfigError, one sentence naming --input and both choices.
InputForm parse_input_form(const std::string& value);

// The line a run's model reads for `line` (language `lang`) given in `form`: normalized like the
// training text when the run reads tokenized text and the form is raw, otherwise unchanged.
std::string model_text(const ExperimentConfig& cfg, const std::string& line, const std::string& lang, InputForm form);

struct EvalArgs {
    std::string run_dir, src, ref, out;
    std::string config, runs_glob;       // --config, --runs: eval --split over an experiment's finished runs
    std::vector<std::string> splits;     // --split: score these splits of the run's own task instead of files
    std::vector<std::string> overrides;  // with --split: evaluation settings (eval.*, test lengths, ...)
    std::size_t beam = 0;  // 0 = the run's eval.beam
    std::string input = "raw";
};
struct TranslateArgs {
    std::string run_dir;
    std::size_t beam = 0;
    std::string input = "raw";
};

int cmd_eval(const EvalArgs& a);
int cmd_translate(const TranslateArgs& a);
// stdin -> stdout, each line of language `lang` normalized like the training text of `task` ("": the first
// registered task that has a normalizer, TaskEntry::tokenized_text).
int cmd_normalize(const std::string& lang, const std::string& task = "");
int cmd_list();
// Every config key: type, default, allowed values (describe_config_keys), one line each.
int cmd_list_keys();

}  // namespace relpos
