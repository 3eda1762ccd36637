// Data of the decoder-only tasks: the algorithmic suite (answers, layout, determinism, errors).
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "experiments/corpus.hpp"
#include "experiments/tasks/algorithmic.hpp"

using namespace relpos;
namespace fs = std::filesystem;

namespace {

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
