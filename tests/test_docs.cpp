// No code outside experiments/tasks/ names a task. (The lists of encodings and tasks the docs show a reader are
// checked against the registries by tests/test_registry_lists.cpp, one row per list.)
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "experiments/tasks/task.hpp"
#include "nn/position.hpp"

#include <catch2/catch.hpp>


TEST_CASE("docs/no_code_outside_tasks_names_a_task", "[docs][tasks]") {
    // Tasks are plug-ins: the engine, the layers and every room of experiments/ but tasks/ work for any task
    // and never name one (experiments/README.md). A registered name that is an ordinary word (copy, sort)
    // counts where it is quoted or given as a task; the others count anywhere, as whole words in any case.
    namespace fs = std::filesystem;
    const std::set<std::string> words{"copy", "reverse", "sort", "parity", "addition"};
    const fs::path root(RELPOS_SOURCE_DIR);
    std::vector<fs::path> files;
    for (const char* dir : {"autodiff", "nn", "experiments"})
        for (const auto& e : fs::recursive_directory_iterator(root / dir)) {
            const std::string rel = fs::relative(e.path(), root).generic_string();
            if (rel.rfind("experiments/tasks/", 0) == 0) continue;
            if (e.path().extension() == ".cpp" || e.path().extension() == ".hpp") files.push_back(e.path());
        }
    REQUIRE(files.size() > 50);
    for (const auto& name : relpos::task_registry().names()) {
        const std::string pattern = words.count(name)
                                        ? "[\"'`]" + name + "[\"'`]|task[:= ]+" + name + "\\b"
                                        : "\\b" + name + "\\b";
        const std::regex re(pattern, std::regex::icase);
        for (const auto& f : files) {
            std::ifstream in(f);
            std::string line;
            for (std::size_t n = 1; std::getline(in, line); ++n)
                if (std::regex_search(line, re))
                    FAIL_CHECK(fs::relative(f, root).generic_string() << ":" << n << " names task " << name << ": " << line);
        }
    }
}
