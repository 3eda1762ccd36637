// The `relpos` subcommands other than run (which lives in runner.hpp).
#pragma once

#include <string>

namespace relpos {

struct EvalArgs {
    std::string run_dir, src, ref, out;
    std::size_t beam = 0;  // 0 = the run's eval.beam
};
struct TranslateArgs {
    std::string run_dir;
    std::size_t beam = 0;
};

int cmd_eval(const EvalArgs& a);
int cmd_translate(const TranslateArgs& a);
int cmd_list();
int cmd_report(const std::string& dir);  // report.cpp

}  // namespace relpos
