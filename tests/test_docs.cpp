// The lists the docs show a reader (the position encodings in README.md, the tasks in docs/configs.md's
// data.task row) are the registries' names, so a new plug-in that is not documented, or a name left
// behind after one is removed, fails the suite; and no code outside experiments/tasks/ names a task.
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

namespace {

std::string read_doc(const std::string& rel) {
    std::ifstream f(std::string(RELPOS_SOURCE_DIR) + "/" + rel);
    REQUIRE(f.good());
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

// The `backticked` single words of text.
std::set<std::string> backticked_names(const std::string& text) {
    std::set<std::string> out;
    static const std::regex re("`([a-z][a-z0-9_]*)`");
    for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator(); ++it)
        out.insert((*it)[1]);
    return out;
}

// The text of `doc` from the first occurrence of `from` to the next occurrence of `to` after it.
std::string between(const std::string& doc, const std::string& from, const std::string& to) {
    const auto a = doc.find(from);
    INFO("looking for '" << from << "'");
    REQUIRE(a != std::string::npos);
    const auto b = doc.find(to, a + from.size());
    INFO("looking for '" << to << "' after it");
    REQUIRE(b != std::string::npos);
    return doc.substr(a + from.size(), b - a - from.size());
}

std::set<std::string> as_set(const std::vector<std::string>& v) { return {v.begin(), v.end()}; }

}  // namespace

TEST_CASE("docs/readme_lists_every_registered_position_encoding", "[docs]") {
    // README.md: "... **position encodings as plug-ins**: `none`, `sinusoidal`, ... A new encoding is ..."
    const std::string list = between(read_doc("README.md"), "**position encodings as plug-ins**", "A new encoding is");
    // (an option quoted with its value, `bidirectional: offset`, is not a name: it has a ':' and a space)
    CHECK(backticked_names(list) == as_set(relpos::nn::position_registry().names()));
}

TEST_CASE("docs/configs_md_lists_every_registered_task", "[docs]") {
    // docs/configs.md, the data.task row: "| `task` | string | `multi30k` | a registered task (`relpos list`): ..."
    const std::string row = between(read_doc("docs/configs.md"), "| `task` | string |", "\n");
    std::set<std::string> listed = backticked_names(between("|" + row, "a registered task", "| what to learn"));
    listed.erase("relpos");  // `relpos list`
    CHECK(listed == as_set(relpos::task_registry().names()));
}

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
