// Data of the decoder-only tasks: the algorithmic suite (answers, layout, determinism, errors) and the
// Brown corpus reader (on the committed sample in data/brown/sample; the full corpus when installed).
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "experiments/data/corpus.hpp"
#include "experiments/tasks/algorithmic.hpp"
#include "experiments/tasks/brown.hpp"

using namespace relpos;
namespace fs = std::filesystem;

namespace {

const std::string kSample = std::string(RELPOS_SOURCE_DIR) + "/data/brown/sample";
const std::string kFullBrown = std::string(RELPOS_SOURCE_DIR) + "/" + BROWN_DEFAULT_DIR;

// A fresh directory per test (ctest may run test cases in parallel processes).
std::string fresh_dir(const std::string& name) {
    const fs::path p = fs::path(RELPOS_BINARY_DIR) / "test-tmp" / (name + "-" + std::to_string(::getpid()));
    fs::remove_all(p);
    fs::create_directories(p);
    return p.string();
}

void write_file(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

// Symbol values -> ids.
std::vector<std::int32_t> sym(const std::vector<int>& values) {
    std::vector<std::int32_t> ids;
    for (int v : values) ids.push_back(algo_symbol_id(static_cast<std::size_t>(v)));
    return ids;
}

// An addition prompt: a's digits, PLUS, b's digits (each least-significant first).
std::vector<std::int32_t> add_prompt(const std::vector<int>& a, const std::vector<int>& b) {
    auto p = sym(a);
    p.push_back(ALGO_PLUS_ID);
    const auto q = sym(b);
    p.insert(p.end(), q.begin(), q.end());
    return p;
}

}  // namespace

// ---------------------------------------------------------------- algorithmic

TEST_CASE("algorithmic/hand_written_answers") {
    const std::size_t k = 10;
    REQUIRE(algorithmic_answer("copy", sym({3, 1, 4}), k) == sym({3, 1, 4}));
    REQUIRE(algorithmic_answer("reverse", sym({3, 1, 4, 1}), k) == sym({1, 4, 1, 3}));
    REQUIRE(algorithmic_answer("sort", sym({3, 1, 4, 1, 0}), k) == sym({0, 1, 1, 3, 4}));
    REQUIRE(algorithmic_answer("duplicate_string", sym({1, 0, 2}), k) == sym({1, 0, 2, 1, 0, 2}));
    // Delétang et al.'s examples: 00110101 -> 0100 0111, 110 -> 10 1.
    REQUIRE(algorithmic_answer("odds_first", sym({0, 0, 1, 1, 0, 1, 0, 1}), 2) == sym({0, 1, 0, 0, 0, 1, 1, 1}));
    REQUIRE(algorithmic_answer("odds_first", sym({1, 1, 0}), 2) == sym({1, 0, 1}));
    REQUIRE(algorithmic_answer("parity", sym({1, 0, 1, 1}), k) == sym({1}));  // three 1s: odd
    REQUIRE(algorithmic_answer("parity", sym({1, 1, 0}), k) == sym({0}));     // two 1s: even
    REQUIRE(algorithmic_answer("parity", sym({0}), k) == sym({0}));
    // Delétang et al.'s examples, moves written as step + 1: (1 -1 0 -1 -1) -> 3, (1 1 1 -1) -> 2.
    REQUIRE(algorithmic_answer("cycle_navigation", sym({2, 0, 1, 0, 0}), k) == sym({3}));
    REQUIRE(algorithmic_answer("cycle_navigation", sym({2, 2, 2, 0}), k) == sym({2}));
    REQUIRE(algorithmic_answer("cycle_navigation", sym({2, 2, 2, 2, 2, 2}), k) == sym({1}));  // wraps: 6 mod 5
    // Least-significant digit first: 999 + 001 = 1000 is 9 9 9 + 1 0 0 = 0 0 0 1.
    REQUIRE(algorithmic_answer("addition", add_prompt({9, 9, 9}, {1, 0, 0}), k) == sym({0, 0, 0, 1}));
    // 123 + 456 = 579 (0579): 3 2 1 + 6 5 4 = 9 7 5 0.
    REQUIRE(algorithmic_answer("addition", add_prompt({3, 2, 1}, {6, 5, 4}), k) == sym({9, 7, 5, 0}));
    // 58 + 67 = 125: 8 5 + 7 6 = 5 2 1 (carries into the last digit).
    REQUIRE(algorithmic_answer("addition", add_prompt({8, 5}, {7, 6}), k) == sym({5, 2, 1}));
    REQUIRE(algorithmic_answer("addition", add_prompt({0}, {0}), k) == sym({0, 0}));
}

TEST_CASE("algorithmic/examples_are_well_formed") {
    const std::size_t n_symbols = 7, lo = 1, hi = 12;
    for (const auto& task : algorithmic_task_names()) {
        INFO("task " << task);
        const auto data = generate_algorithmic(task, 400, lo, hi, n_symbols, 42);
        REQUIRE(data.size() == 400);
        const auto vocab = static_cast<std::int32_t>(algorithmic_vocab_size(task, n_symbols));
        std::set<std::size_t> lengths;
        for (const auto& ex : data) {
            const std::size_t n = algorithmic_length(task, ex);
            lengths.insert(n);
            REQUIRE((n >= lo && n <= hi));
            // BOS prompt SEP | answer EOS; specials only there, every id inside the task's vocabulary.
            REQUIRE(ex.src.front() == BOS_ID);
            REQUIRE(ex.src.back() == ALGO_SEP_ID);
            REQUIRE(ex.tgt.back() == EOS_ID);
            const auto prompt = algorithmic_prompt(ex);
            const std::vector<std::int32_t> answer(ex.tgt.begin(), ex.tgt.end() - 1);
            for (auto id : prompt) REQUIRE(((id >= ALGO_FIRST_SYMBOL_ID && id < vocab) || (task == "addition" && id == ALGO_PLUS_ID)));
            for (auto id : answer) REQUIRE((id >= ALGO_FIRST_SYMBOL_ID && id < vocab));
            REQUIRE(algorithmic_answer(task, prompt, n_symbols) == answer);
            // Prompt and answer sizes by task.
            std::size_t want_prompt = n, want_answer = n;
            if (task == "duplicate_string") want_answer = 2 * n;
            if (task == "parity" || task == "cycle_navigation") want_answer = 1;
            if (task == "addition") want_prompt = 2 * n + 1, want_answer = n + 1;
            REQUIRE(prompt.size() == want_prompt);
            REQUIRE(answer.size() == want_answer);
            if (task == "addition") REQUIRE(prompt[n] == ALGO_PLUS_ID);
            if (task == "parity") for (auto id : prompt) REQUIRE(algo_symbol_value(id) < 2);
            if (task == "cycle_navigation") for (auto id : prompt) REQUIRE(algo_symbol_value(id) < 3);
        }
        REQUIRE(lengths.size() == hi - lo + 1);  // every length occurs, both ends included
    }
    REQUIRE(algorithmic_vocab_size("copy", 20) == 26);
    REQUIRE(algorithmic_vocab_size("parity", 20) == 8);             // bits, whatever n_symbols says
    REQUIRE(algorithmic_vocab_size("cycle_navigation", 20) == 11);  // answers 0..4
    REQUIRE(algorithmic_vocab_size("addition", 20) == 16);          // decimal digits
    REQUIRE(ALGO_SEP_ID == FIRST_FREE_ID);
}

TEST_CASE("algorithmic/deterministic_in_the_seed") {
    for (const auto& task : algorithmic_task_names()) {
        const auto a = generate_algorithmic(task, 100, 2, 9, 5, 7);
        const auto b = generate_algorithmic(task, 100, 2, 9, 5, 7);
        const auto c = generate_algorithmic(task, 100, 2, 9, 5, 8);
        const auto first = generate_algorithmic(task, 10, 2, 9, 5, 7);
        for (std::size_t i = 0; i < a.size(); ++i) REQUIRE((a[i].src == b[i].src && a[i].tgt == b[i].tgt));
        bool differs = false;
        for (std::size_t i = 0; i < a.size(); ++i) differs = differs || a[i].src != c[i].src;
        REQUIRE(differs);
        for (std::size_t i = 0; i < first.size(); ++i) REQUIRE(first[i].src == a[i].src);  // count only truncates
    }
    // Pinned values: relpos::Rng and the draw order fix the data on every machine and compiler.
    const auto copy = generate_algorithmic("copy", 2, 3, 6, 10, 1);
    const auto add = generate_algorithmic("addition", 1, 2, 4, 10, 1);
    CAPTURE(copy[0].src, copy[1].src, add[0].src, add[0].tgt);
    REQUIRE(copy[0].src == std::vector<std::int32_t>{2, 8, 6, 9, 7, 4});
    REQUIRE(copy[1].src == std::vector<std::int32_t>{2, 12, 15, 7, 14, 7, 4});
    // 302 + 621 = 923: digits 2 0 3 + 1 2 6 = 3 2 9 0, least-significant first.
    REQUIRE(add[0].src == std::vector<std::int32_t>{2, 8, 6, 9, 5, 7, 8, 12, 4});
    REQUIRE(add[0].tgt == std::vector<std::int32_t>{9, 8, 15, 6, 3});
}

TEST_CASE("algorithmic/errors") {
    REQUIRE_THROWS_WITH(generate_algorithmic("copyy", 1, 1, 2, 5, 1),
                        Catch::Equals("unknown algorithmic task 'copyy'; known tasks: copy, reverse, sort, duplicate_string, "
                                      "odds_first, parity, cycle_navigation, addition."));
    REQUIRE_THROWS_AS(algorithmic_vocab_size("bucket", 5), DataError);
    REQUIRE_THROWS_WITH(generate_algorithmic("copy", 1, 0, 2, 5, 1), Catch::Contains("min_len must be at least 1"));
    REQUIRE_THROWS_WITH(generate_algorithmic("sort", 1, 5, 2, 5, 1), Catch::Contains("min_len (5) must not exceed max_len (2)"));
    REQUIRE_THROWS_WITH(generate_algorithmic("reverse", 1, 1, 2, 1, 1), Catch::Contains("n_symbols must be between 2 and 1000000"));
    REQUIRE(generate_algorithmic("parity", 3, 1, 2, 1, 1).size() == 3);  // fixed alphabet: n_symbols unused
    REQUIRE(generate_algorithmic("copy", 0, 1, 2, 5, 1).empty());
    // Prompts the task cannot hold.
    REQUIRE_THROWS_WITH(algorithmic_answer("parity", sym({0, 2}), 2),
                        Catch::Contains("position 1 holds id 8; allowed are the symbol ids 6 .. 7"));
    REQUIRE_THROWS_AS(algorithmic_answer("copy", {BOS_ID, 6}, 5), DataError);
    REQUIRE_THROWS_AS(algorithmic_answer("copy", {}, 5), DataError);
    REQUIRE_THROWS_AS(algorithmic_answer("cycle_navigation", sym({3}), 5), DataError);  // moves are 0..2 only
    REQUIRE_THROWS_WITH(algorithmic_answer("addition", add_prompt({1, 2}, {3}), 10),
                        Catch::Contains("two equally long digit strings joined by one PLUS id 5"));
    REQUIRE_THROWS_AS(algorithmic_answer("addition", sym({1, 2}), 10), DataError);                 // no PLUS
    REQUIRE_THROWS_AS(algorithmic_answer("addition", add_prompt({}, {}), 10), DataError);          // no digits
    REQUIRE_THROWS_AS(algorithmic_answer("addition", {7, ALGO_PLUS_ID, ALGO_PLUS_ID}, 10), DataError);  // two PLUS
    REQUIRE_THROWS_AS(algorithmic_answer("addition", add_prompt({10}, {1}), 10), DataError);        // not a digit
    REQUIRE_THROWS_AS(algorithmic_prompt(Example{{BOS_ID, 6}, {EOS_ID}}), DataError);                // no SEP
}

// ---------------------------------------------------------------- Brown corpus

TEST_CASE("brown/split_rule") {
    // i = number - 1; i % 10 == 8 valid, == 9 test.
    std::string s;
    for (std::size_t n = 1; n <= 21; ++n) s += brown_split_of(n)[1];  // r(ain), a(lid), e(st)
    REQUIRE(s == "rrrrrrrraerrrrrrrraer");
    const auto c = load_brown(kSample);
    REQUIRE(c.valid_files == std::vector<std::string>{"ca09", "ce09", "cr09"});
    REQUIRE(c.test_files == std::vector<std::string>{"ca10", "ce10"});  // humor (r) has 9 files: no test file
    REQUIRE(c.train_files.size() == 24);
    REQUIRE(c.train_files.front() == "ca01");
    REQUIRE(c.train_files.back() == "cr08");
    // Measured on the sample (paragraphs and word/tag tokens; data/brown/README.md).
    REQUIRE(c.train.size() == 295);
    REQUIRE(c.valid.size() == 33);
    REQUIRE(c.test.size() == 30);
    REQUIRE(count_words(c.train) == 16668);
    REQUIRE(count_words(c.valid) == 2010);
    REQUIRE(count_words(c.test) == 1466);
}

TEST_CASE("brown/tags_stripped") {
    const auto c = load_brown(kSample);
    REQUIRE(c.train.front() ==
            "The Fulton County Grand Jury said Friday an investigation of Atlanta's recent primary election produced `` no "
            "evidence '' that any irregularities took place .");
    // The only words with a '/' in the sample are real ones; no tag survives.
    std::set<std::string> slashed;
    for (const auto* split : {&c.train, &c.valid, &c.test})
        for (const auto& p : *split) {
            REQUIRE(!p.empty());
            REQUIRE(p.find("  ") == std::string::npos);
            REQUIRE(p.find('\t') == std::string::npos);
            std::istringstream words(p);
            for (std::string w; words >> w;)
                if (w.find('/') != std::string::npos) slashed.insert(w);
        }
    REQUIRE(slashed == std::set<std::string>{"6-1/2", "over/under"});

    // The tricky tokens of the full corpus, and the paragraph structure (sentences per line, blank lines).
    const std::string dir = fresh_dir("brown-tokens");
    write_file(dir + "/cb01", "\n\n\tA/at 1/2''/nn and/or/cc //in 1-1/2/cd ``/`` Atlanta's/np$ ./.\r\nNext/ap line/nn\n\n\n\tNew/jj para/nn\n");
    REQUIRE(read_brown_file(dir + "/cb01") ==
            std::vector<std::string>{"A 1/2'' and/or / 1-1/2 `` Atlanta's . Next line", "New para"});
}

TEST_CASE("brown/deterministic") {
    const auto a = load_brown(kSample);
    const auto b = load_brown(kSample);
    REQUIRE(a.train == b.train);
    REQUIRE(a.valid == b.valid);
    REQUIRE(a.test == b.test);
}

TEST_CASE("brown/errors") {
    const std::string dir = fresh_dir("brown-errors");
    REQUIRE_THROWS_WITH(load_brown(dir + "/none", "key data.dir = x"),
                        Catch::Equals("Brown corpus directory " + dir + "/none does not exist (key data.dir = x); run `make "
                                      "data` (or scripts/install-data.sh brown) to install the Brown corpus."));
    write_file(dir + "/README", "not a corpus file\n");
    write_file(dir + "/cz01", "x/y\n");  // no genre z
    REQUIRE_THROWS_WITH(load_brown(dir), Catch::Contains("holds no corpus files (ca01 .. cr09)") && Catch::Contains("make data"));
    write_file(dir + "/ca01", "A/at b/nn\n\n\tuntagged words/nns here\n");
    REQUIRE_THROWS_WITH(load_brown(dir), Catch::Equals(dir + "/ca01 line 3 has the token 'untagged', not word/tag; the Brown "
                                                             "reader needs the tagged corpus (Form C) that `make data` installs."));
    write_file(dir + "/ca01", "A/at /nn\n");
    REQUIRE_THROWS_WITH(load_brown(dir), Catch::Contains("token '/nn'"));
    write_file(dir + "/ca01", "A/at b/\n");
    REQUIRE_THROWS_WITH(load_brown(dir), Catch::Contains("token 'b/'"));
}

TEST_CASE("brown/full_corpus_counts") {
    if (!fs::is_directory(kFullBrown)) {
        WARN("Brown corpus not installed (" + kFullBrown + "; `make data`): full-corpus counts not checked.");
        return;
    }
    const auto c = load_brown(kFullBrown);
    REQUIRE(c.train_files.size() == 414);
    REQUIRE(c.valid_files.size() == 45);
    REQUIRE(c.test_files.size() == 41);
    REQUIRE(c.train.size() == 12949);
    REQUIRE(c.valid.size() == 1345);
    REQUIRE(c.test.size() == 1373);
    REQUIRE(count_words(c.train) == 961698);
    REQUIRE(count_words(c.valid) == 104720);
    REQUIRE(count_words(c.test) == 94774);
}
