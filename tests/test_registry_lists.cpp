// Every list of position encodings or tasks written by hand outside the registries, checked against the
// registries (what `relpos list` prints): a new encoding or task missing from one of them, or a name left behind
// after one is removed, fails here naming the file and the list.
//
// One row per list: the file, what it lists, how to read the names from it, and whether it must hold exactly the
// registered names or at least them (a list that also names variants or other words). To cover another file
// (README.md, should it list the encodings again), add a row to kLists below: a `read` function that returns
// the names the list holds (the helpers `section`, `backticked`, `quoted` and `python_types` read most lists).
// A count of the reference fixtures in a page is checked like the fixtures README's (the second TEST_CASE).
#include <filesystem>
#include <fstream>
#include <functional>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "experiments/tasks/task.hpp"
#include "nn/position.hpp"

#include <catch2/catch.hpp>

namespace {

using Names = std::set<std::string>;

std::string read_file(const std::string& rel) {
    std::ifstream f(std::string(RELPOS_SOURCE_DIR) + "/" + rel);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
}

// The text from the first `from` to the next `to` after it ("" when either is missing: the row then fails
// naming what it looked for).
std::string section(const std::string& text, const std::string& from, const std::string& to) {
    const auto a = text.find(from);
    if (a == std::string::npos) return "";
    const auto b = text.find(to, a + from.size());
    return b == std::string::npos ? "" : text.substr(a + from.size(), b - a - from.size());
}

// Names matched by the regex's first group.
Names matches(const std::string& text, const std::string& pattern) {
    Names out;
    const std::regex re(pattern);
    for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator(); ++it)
        out.insert((*it)[1]);
    return out;
}
// `name` (one word in backticks; an option quoted with its value, `bidirectional: offset`, is not a name)
Names backticked(const std::string& text) { return matches(text, "`([a-z][a-z0-9_]*)`"); }
// "name" (a libFuzzer dictionary's entries)
Names quoted(const std::string& text) { return matches(text, "\"([a-z][a-z0-9_]*)\""); }
// {"type": "name" (scripts/reference/make_fixtures.py's POSITIONS rows)
Names python_types(const std::string& text) { return matches(text, "\\{\"type\": \"([a-z][a-z0-9_]*)\""); }

Names encodings() {
    const auto v = relpos::nn::position_registry().names();
    return {v.begin(), v.end()};
}
// The paper each encoding's `relpos list` line cites first ("Su et al. 2021"); none for one that cites none.
Names papers() {
    Names out;
    const std::regex re("([A-Z][a-z]+ et al\\. \\d{4})");
    for (const auto& name : relpos::nn::position_registry().names()) {
        const std::string summary = relpos::nn::position_registry().find(name)->summary;
        std::smatch m;
        if (std::regex_search(summary, m, re)) out.insert(m[1]);
    }
    return out;
}
Names tasks() {
    const auto v = relpos::task_registry().names();
    return {v.begin(), v.end()};
}

struct ListRow {
    std::string file;                            // relative to the repository root
    std::string what;                            // which list in it, as a reader finds it
    std::function<Names()> registered;           // encodings or tasks
    std::function<Names(const std::string&)> read;  // the names the list holds, from the file's text
    bool exact;                                  // true: exactly the registered names; false: at least them
    Names not_listed;                            // registered names the list leaves out on purpose
};

const std::vector<ListRow> kLists = {
    {"docs/components.md", "the encodings after **Position encodings are plug-ins**", encodings,
     [](const std::string& t) { return backticked(section(t, "**Position encodings are plug-ins**", "Every encoding but")); },
     true, {}},
    {"docs/configs.md", "the tasks of the data.task row", tasks,
     [](const std::string& t) {
         Names n = backticked(section(section(t, "| `task` | string |", "\n"), "a registered task", "| what to learn"));
         n.erase("relpos");  // `relpos list`
         return n;
     },
     true, {}},
    {"docs/adding-a-position-encoding.md", "the 'used by' column of the table of hooks", encodings,
     [](const std::string& t) { return backticked(section(t, "| hook | method |", "\n\n")); },
     false, {"none"}},  // none acts at no hook
    {"docs/adding-a-position-encoding.md", "the table of section 9, The built-in encodings", encodings,
     [](const std::string& t) {
         return matches(section(t, "## 9. The built-in encodings", "\n\n**"), "\n\\| `([a-z][a-z0-9_]*)` \\|");
     },
     true, {}},
    {"scripts/reference/make_fixtures.py", "the papers its docstring says the reference model is written from", papers,
     [](const std::string& t) {
         // the docstring wraps lines: read it as one line
         const std::string text = std::regex_replace(section(t, "The model is written from", "\"\"\""), std::regex("\\s+"), " ");
         return matches(text, "([A-Z][a-z]+ et al\\. \\d{4})");
     },
     false, {}},
    {"tests/fixtures/reference/README.md", "the encodings of its section 'The cases'", encodings,
     [](const std::string& t) { return backticked(section(t, "## The cases", "## Files of a case")); }, false, {}},
    {"scripts/reference/make_fixtures.py", "the POSITIONS rows (one reference case each)", encodings,
     [](const std::string& t) { return python_types(section(t, "POSITIONS = [", "\n]\n")); }, true, {}},
    {"fuzz/config.dict", "the fuzzer's dictionary (every encoding name)", encodings,
     [](const std::string& t) { return quoted(t); }, false, {}},
    {"fuzz/config.dict", "the fuzzer's dictionary (every task name)", tasks, [](const std::string& t) { return quoted(t); },
     false, {}},
};

}  // namespace

TEST_CASE("docs/every hand-written list of encodings and tasks holds the registered names", "[docs][registry]") {
    for (const auto& row : kLists) {
        const std::string text = read_file(row.file);
        INFO(row.file << ": " << row.what);
        REQUIRE_FALSE(text.empty());
        const Names listed = row.read(text);
        Names want = row.registered();
        for (const auto& n : row.not_listed) want.erase(n);
        for (const auto& name : want)
            if (!listed.count(name)) FAIL_CHECK(row.file << ": " << row.what << " lacks the registered '" << name << "'");
        if (row.exact)
            for (const auto& name : listed)
                if (!want.count(name))
                    FAIL_CHECK(row.file << ": " << row.what << " names '" << name << "', which is not registered");
    }
}

TEST_CASE("docs/the reference fixtures' README counts the cases index.json lists", "[docs][registry][reference]") {
    // "17 position-encoding cases x {post-norm, pre-norm} = 34": the POSITIONS rows and index.json's cases
    const std::string readme = read_file("tests/fixtures/reference/README.md");
    std::smatch m;
    REQUIRE(std::regex_search(readme, m, std::regex("(\\d+) position-encoding cases x \\{post-norm, pre-norm\\} = (\\d+)")));
    const std::string index = read_file("tests/fixtures/reference/index.json");
    const auto cases = static_cast<long>(matches(index, "\"((?:post|pre)_[a-z0-9_]+)\"").size());
    // the POSITIONS rows: lines that open a tuple, ("name", {"type": ...
    const std::string script = section(read_file("scripts/reference/make_fixtures.py"), "POSITIONS = [", "\n]\n");
    const auto rows = static_cast<long>(matches(script, "\n    \\(\"([a-z0-9_]+)\", \\{").size());
    INFO("README: " << m[0] << "; index.json: " << cases << " cases; make_fixtures.py: " << rows << " POSITIONS rows");
    CHECK(std::stol(m[2]) == cases);
    CHECK(std::stol(m[1]) * 2 == cases);
    CHECK(std::stol(m[1]) == rows);
}
