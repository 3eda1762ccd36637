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

// The tasks appended for Ruoss et al. 2023 (Delétang et al. 2023's definitions). Symbol values: bits 0, 1;
// modular_arithmetic residues 0..4 and + 5, - 6, * 7; missing_duplicate MISSING 2, FILL 3; stack_manipulation
// POP 2, PUSH 0 3, PUSH 1 4.
TEST_CASE("algorithmic/ruoss_tasks_hand_written_answers") {
    const int P = 5, M = 6, T = 7;           // modular_arithmetic's + - *
    const int MISS = 2, FILL = 3;            // missing_duplicate
    const int POP = 2, PUSH0 = 3, PUSH1 = 4;  // stack_manipulation
    const std::size_t k = 10;                // n_symbols: ignored by every one of these tasks

    // binary_addition, bits least-significant first, answer without leading (= trailing) zeros.
    // Delétang et al.'s docstring: 001 + 01101 = 01011 (4 + 22 = 26), 1001 + 000001 = 100101 (9 + 32 = 41).
    REQUIRE(algorithmic_answer("binary_addition", add_prompt({0, 0, 1}, {0, 1, 1, 0, 1}), k) == sym({0, 1, 0, 1, 1}));
    REQUIRE(algorithmic_answer("binary_addition", add_prompt({1, 0, 0, 1}, {0, 0, 0, 0, 0, 1}), k) == sym({1, 0, 0, 1, 0, 1}));
    REQUIRE(algorithmic_answer("binary_addition", add_prompt({1}, {1}), k) == sym({0, 1}));           // 1 + 1 = 2
    REQUIRE(algorithmic_answer("binary_addition", add_prompt({1, 1}, {1}), k) == sym({0, 0, 1}));     // 3 + 1 = 4
    REQUIRE(algorithmic_answer("binary_addition", add_prompt({1, 0, 0}, {1}), k) == sym({0, 1}));     // 1 + 1, zeros dropped
    REQUIRE(algorithmic_answer("binary_addition", add_prompt({0}, {0, 0}), k) == sym({0}));           // 0 + 0 = 0: one bit
    // n <= 2: one number, no PLUS; the answer is the number (2 = 0 1; 0 0 = 0; 1 0 = 1).
    REQUIRE(algorithmic_answer("binary_addition", sym({0, 1}), k) == sym({0, 1}));
    REQUIRE(algorithmic_answer("binary_addition", sym({0, 0}), k) == sym({0}));
    REQUIRE(algorithmic_answer("binary_addition", sym({1, 0}), k) == sym({1}));

    // modular_arithmetic, mod 5, * before + and -. Delétang et al.'s examples: 1 + 2 * 3 = 7 = 2,
    // 1 - 1 - 1 = -1 = 4, 0 * 1 + 4 * 3 - 2 = 10 = 0.
    REQUIRE(algorithmic_answer("modular_arithmetic", sym({1, P, 2, T, 3}), k) == sym({2}));
    REQUIRE(algorithmic_answer("modular_arithmetic", sym({1, M, 1, M, 1}), k) == sym({4}));
    REQUIRE(algorithmic_answer("modular_arithmetic", sym({0, T, 1, P, 4, T, 3, M, 2}), k) == sym({0}));
    REQUIRE(algorithmic_answer("modular_arithmetic", sym({1, M, 3, T, 4}), k) == sym({4}));  // 1 - 12 = -11 = 4, not (1 - 3) * 4 = 2
    REQUIRE(algorithmic_answer("modular_arithmetic", sym({4, T, 4, T, 4}), k) == sym({4}));  // 64 = 4
    REQUIRE(algorithmic_answer("modular_arithmetic", sym({2, T, 3, M, 4, P, 1}), k) == sym({3}));  // 6 - 4 + 1 = 3
    REQUIRE(algorithmic_answer("modular_arithmetic", sym({3}), k) == sym({3}));

    // missing_duplicate. Delétang et al.'s examples: 0110 0?10 -> 1, 101 1?1 (odd: FILL) -> 0.
    REQUIRE(algorithmic_answer("missing_duplicate", sym({0, 1, 1, 0, 0, MISS, 1, 0}), k) == sym({1}));
    REQUIRE(algorithmic_answer("missing_duplicate", sym({1, 0, 1, 1, MISS, 1, FILL}), k) == sym({0}));
    REQUIRE(algorithmic_answer("missing_duplicate", sym({MISS, 1, 0, 1}), k) == sym({0}));  // ?1 01: the hole is in w's first copy
    REQUIRE(algorithmic_answer("missing_duplicate", sym({1, MISS, FILL}), k) == sym({1}));
    REQUIRE(algorithmic_answer("missing_duplicate", sym({1}), k) == sym({1}));  // the fixed n = 1 example

    // stack_manipulation: the stack bottom to top, then actions; the answer top to bottom. Delétang et al.'s
    // examples: 0110 PUSH1 POP POP -> 1 1 0; 110 POP POP POP -> empty.
    REQUIRE(algorithmic_answer("stack_manipulation", sym({0, 1, 1, 0, PUSH1, POP, POP}), k) == sym({1, 1, 0}));
    REQUIRE(algorithmic_answer("stack_manipulation", sym({1, 1, 0, POP, POP, POP}), k).empty());
    REQUIRE(algorithmic_answer("stack_manipulation", sym({1, POP, POP, PUSH0}), k) == sym({0}));  // POP on empty: nothing
    REQUIRE(algorithmic_answer("stack_manipulation", sym({0, 1, PUSH0, PUSH1}), k) == sym({1, 0, 1, 0}));
    REQUIRE(algorithmic_answer("stack_manipulation", sym({1}), k) == sym({1}));  // n = 1: one bit, no action

    // even_pairs. Delétang et al.'s examples: 001110 (one 01, one 10) -> 0; 0101001 (three 01, two 10) -> 1.
    REQUIRE(algorithmic_answer("even_pairs", sym({0, 0, 1, 1, 1, 0}), k) == sym({0}));
    REQUIRE(algorithmic_answer("even_pairs", sym({0, 1, 0, 1, 0, 0, 1}), k) == sym({1}));
    REQUIRE(algorithmic_answer("even_pairs", sym({1, 0}), k) == sym({1}));
    REQUIRE(algorithmic_answer("even_pairs", sym({1}), k) == sym({0}));

    // bucket_sort. Delétang et al.'s example: 10204112 -> 00111224.
    REQUIRE(algorithmic_answer("bucket_sort", sym({1, 0, 2, 0, 4, 1, 1, 2}), k) == sym({0, 0, 1, 1, 1, 2, 2, 4}));
    REQUIRE(algorithmic_answer("bucket_sort", sym({1, 1, 1, 0, 0, 0, 1}), 2) == sym({0, 0, 0, 1, 1, 1, 1}));
}

namespace {

// Independent evaluators for the generator checks below (not the library's code paths).
// A little-endian bit string's value (n <= 62).
std::uint64_t bits_value(const std::vector<std::int32_t>& ids) {
    std::uint64_t v = 0;
    for (std::size_t i = ids.size(); i-- > 0;) v = 2 * v + algo_symbol_value(ids[i]);
    return v;
}

// A modular_arithmetic expression: terms split at + and -, each a signed product, summed in 64 bits.
std::size_t mod5_value(const std::vector<std::int32_t>& ids) {
    long long sum = 0, product = 1;
    int sign = 1;
    for (std::size_t i = 0; i < ids.size(); ++i) {
        const auto v = static_cast<long long>(algo_symbol_value(ids[i]));
        if (i % 2 == 0) { product *= v; continue; }
        if (v == 7) continue;  // *
        sum += sign * product;
        product = 1;
        sign = v == 5 ? 1 : -1;
    }
    sum += sign * product;
    return static_cast<std::size_t>(((sum % 5) + 5) % 5);
}

}  // namespace

// What each length n means, as Delétang et al.'s sample_batch(length = n) draws it, checked at every n.
TEST_CASE("algorithmic/ruoss_tasks_generators_follow_the_reference") {
    const std::size_t count = 400;
    bool saw_empty_stack = false;
    for (std::size_t n = 1; n <= 14; ++n) {
        INFO("n " << n);
        // binary_addition: a PLUS b over n places, PLUS anywhere in 1 .. n - 2, both numbers nonzero.
        std::set<std::size_t> plus_at;
        for (const auto& ex : generate_algorithmic("binary_addition", count, n, n, 3, n)) {
            const auto p = algorithmic_prompt(ex);
            const std::vector<std::int32_t> answer(ex.tgt.begin(), ex.tgt.end() - 1);
            REQUIRE(p.size() == n);
            REQUIRE(algorithmic_length("binary_addition", ex) == n);
            const auto plus = std::find(p.begin(), p.end(), ALGO_PLUS_ID);
            if (n <= 2) {
                REQUIRE(plus == p.end());
                REQUIRE(bits_value(answer) == bits_value(p));
            } else {
                REQUIRE(plus != p.end());
                REQUIRE(std::count(p.begin(), p.end(), ALGO_PLUS_ID) == 1);
                const std::vector<std::int32_t> a(p.begin(), plus), b(plus + 1, p.end());
                plus_at.insert(a.size());
                REQUIRE((bits_value(a) > 0 && bits_value(b) > 0));
                REQUIRE(bits_value(answer) == bits_value(a) + bits_value(b));
                REQUIRE(answer.back() == algo_symbol_id(1));  // no leading zero
            }
        }
        if (n >= 3) REQUIRE(plus_at.size() == n - 2);  // every split 1 .. n - 2 occurs

        // modular_arithmetic: n symbols when odd, n - 1 when even; residues and operators alternate.
        std::set<std::size_t> ops, answers;
        for (const auto& ex : generate_algorithmic("modular_arithmetic", count, n, n, 3, n)) {
            const auto p = algorithmic_prompt(ex);
            REQUIRE(p.size() == (n % 2 == 1 ? n : n - 1));
            for (std::size_t i = 0; i < p.size(); ++i) {
                const std::size_t v = algo_symbol_value(p[i]);
                if (i % 2 == 0) {
                    REQUIRE(v < 5);
                } else {
                    REQUIRE((v >= 5 && v <= 7));
                    ops.insert(v);
                }
            }
            REQUIRE(ex.tgt.size() == 2);
            REQUIRE(algo_symbol_value(ex.tgt[0]) == mod5_value(p));
            answers.insert(algo_symbol_value(ex.tgt[0]));
        }
        if (n >= 3) REQUIRE(ops == std::set<std::size_t>{5, 6, 7});
        REQUIRE(answers.size() == 5);

        // missing_duplicate: w w with one MISSING anywhere, FILL last when n is odd; n = 1 is 1 -> 1.
        std::set<std::size_t> holes;
        for (const auto& ex : generate_algorithmic("missing_duplicate", count, n, n, 3, n)) {
            const auto p = algorithmic_prompt(ex);
            REQUIRE(p.size() == n);
            if (n == 1) {
                REQUIRE((p == sym({1}) && ex.tgt == std::vector<std::int32_t>{algo_symbol_id(1), EOS_ID}));
                continue;
            }
            const std::size_t k = n / 2;
            REQUIRE(std::count(p.begin(), p.end(), algo_symbol_id(2)) == 1);
            REQUIRE(std::count(p.begin(), p.end(), algo_symbol_id(3)) == static_cast<long>(n % 2));
            if (n % 2 == 1) REQUIRE(p.back() == algo_symbol_id(3));
            const std::size_t hole = static_cast<std::size_t>(std::find(p.begin(), p.end(), algo_symbol_id(2)) - p.begin());
            holes.insert(hole);
            for (std::size_t i = 0; i < k; ++i)
                if (i != hole && i + k != hole) REQUIRE(p[i] == p[i + k]);
            REQUIRE(ex.tgt[0] == p[hole < k ? hole + k : hole - k]);
        }
        if (n >= 2) REQUIRE(holes.size() == 2 * (n / 2));  // every place of w w can be the hole

        // stack_manipulation: 1 .. n - 1 stack bits, then actions to n symbols (n = 1: one bit).
        std::set<std::size_t> stack_sizes;
        for (const auto& ex : generate_algorithmic("stack_manipulation", count, n, n, 3, n)) {
            const auto p = algorithmic_prompt(ex);
            REQUIRE(p.size() == n);
            std::size_t bits = 0;
            while (bits < n && algo_symbol_value(p[bits]) < 2) ++bits;
            for (std::size_t i = bits; i < n; ++i) REQUIRE((algo_symbol_value(p[i]) >= 2 && algo_symbol_value(p[i]) <= 4));
            if (n == 1) REQUIRE(bits == 1);
            if (n >= 2) REQUIRE((bits >= 1 && bits <= n - 1));
            stack_sizes.insert(bits);
            saw_empty_stack = saw_empty_stack || ex.tgt.size() == 1;
        }
        if (n >= 2) REQUIRE(stack_sizes.size() == n - 1);

        // even_pairs: n bits, the answer is 1 exactly when the first and last differ.
        for (const auto& ex : generate_algorithmic("even_pairs", count, n, n, 3, n)) {
            const auto p = algorithmic_prompt(ex);
            REQUIRE(p.size() == n);
            for (auto id : p) REQUIRE(algo_symbol_value(id) < 2);
            REQUIRE(ex.tgt == std::vector<std::int32_t>{algo_symbol_id(p.front() != p.back() ? 1 : 0), EOS_ID});
        }
    }
    REQUIRE(saw_empty_stack);  // an answer can be EOS alone

    // bucket_sort is sort over 5 symbols: the same examples as sort with n_symbols = 5, whatever n_symbols says.
    const auto bucket = generate_algorithmic("bucket_sort", 200, 1, 12, 99, 5);
    const auto sort5 = generate_algorithmic("sort", 200, 1, 12, 5, 5);
    for (std::size_t i = 0; i < bucket.size(); ++i) REQUIRE((bucket[i].src == sort5[i].src && bucket[i].tgt == sort5[i].tgt));
}

// The eight original tasks produce the data they produced before the Ruoss et al. tasks were appended:
// FNV-1a over 300 examples of each (lengths 1-20, n_symbols 7, seed 11), computed before the change.
TEST_CASE("algorithmic/original_tasks_unchanged") {
    const std::vector<std::pair<std::string, std::uint64_t>> want{
        {"copy", 0xdfce473e9846f6e1ULL},       {"reverse", 0xd49f7fe3000ec869ULL},
        {"sort", 0x3943aa7d794b2835ULL},       {"duplicate_string", 0x311548c808f3c6a3ULL},
        {"odds_first", 0xc408bd9b1dbfc3cfULL}, {"parity", 0x9b3bbd6684221dc2ULL},
        {"cycle_navigation", 0xe29157fdf12351f3ULL}, {"addition", 0x5eef2f9ae77d1445ULL},
    };
    for (const auto& [task, hash] : want) {
        INFO("task " << task);
        std::uint64_t h = 1469598103934665603ULL;
        auto mix = [&](std::int32_t v) { h = (h ^ static_cast<std::uint64_t>(v + 1)) * 1099511628211ULL; };
        for (const auto& e : generate_algorithmic(task, 300, 1, 20, 7, 11)) {
            for (auto id : e.src) mix(id);
            mix(-1);
            for (auto id : e.tgt) mix(id);
            mix(-2);
        }
        REQUIRE(h == hash);
    }
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
            const bool plus_ok = task == "addition" || task == "binary_addition";
            for (auto id : prompt) REQUIRE(((id >= ALGO_FIRST_SYMBOL_ID && id < vocab) || (plus_ok && id == ALGO_PLUS_ID)));
            for (auto id : answer) REQUIRE((id >= ALGO_FIRST_SYMBOL_ID && id < vocab));
            REQUIRE(algorithmic_answer(task, prompt, n_symbols) == answer);
            // Prompt and answer sizes by task.
            std::size_t want_prompt = n, want_answer = n;
            if (task == "duplicate_string") want_answer = 2 * n;
            if (task == "parity" || task == "cycle_navigation" || task == "modular_arithmetic" ||
                task == "missing_duplicate" || task == "even_pairs")
                want_answer = 1;
            if (task == "addition") want_prompt = 2 * n + 1, want_answer = n + 1;
            REQUIRE(prompt.size() == want_prompt);
            if (task == "binary_addition") {  // 1 .. max(|a|, |b|) + 1 <= n - 1 bits; n <= 2: the number itself
                REQUIRE((answer.size() >= 1 && answer.size() <= (n <= 2 ? n : n - 1)));
            } else if (task == "stack_manipulation") {  // the final stack: empty up to all n symbols pushed
                REQUIRE(answer.size() <= n);
            } else {
                REQUIRE(answer.size() == want_answer);
            }
            // Answers use the data values only: bits, or residues for modular_arithmetic.
            if (task == "binary_addition" || task == "missing_duplicate" || task == "stack_manipulation" || task == "even_pairs")
                for (auto id : answer) REQUIRE(algo_symbol_value(id) < 2);
            if (task == "modular_arithmetic") REQUIRE(algo_symbol_value(answer[0]) < 5);
            if (task == "modular_arithmetic") REQUIRE(n % 2 == 1);  // an even n gives n - 1 symbols
            if (task == "addition") REQUIRE(prompt[n] == ALGO_PLUS_ID);
            if (task == "parity") for (auto id : prompt) REQUIRE(algo_symbol_value(id) < 2);
            if (task == "cycle_navigation") for (auto id : prompt) REQUIRE(algo_symbol_value(id) < 3);
        }
        if (task == "modular_arithmetic")
            REQUIRE(lengths == std::set<std::size_t>{1, 3, 5, 7, 9, 11});  // odd lengths only
        else
            REQUIRE(lengths.size() == hi - lo + 1);  // every length occurs, both ends included
    }
    REQUIRE(algorithmic_vocab_size("copy", 20) == 26);
    REQUIRE(algorithmic_vocab_size("parity", 20) == 8);             // bits, whatever n_symbols says
    REQUIRE(algorithmic_vocab_size("cycle_navigation", 20) == 11);  // answers 0..4
    REQUIRE(algorithmic_vocab_size("addition", 20) == 16);          // decimal digits
    REQUIRE(algorithmic_vocab_size("binary_addition", 20) == 8);     // bits (PLUS is id 5)
    REQUIRE(algorithmic_vocab_size("modular_arithmetic", 20) == 14);  // residues 0..4, + - *
    REQUIRE(algorithmic_vocab_size("missing_duplicate", 20) == 10);  // bits, MISSING, FILL
    REQUIRE(algorithmic_vocab_size("stack_manipulation", 20) == 11);  // bits, POP, PUSH 0, PUSH 1
    REQUIRE(algorithmic_vocab_size("even_pairs", 20) == 8);
    REQUIRE(algorithmic_vocab_size("bucket_sort", 20) == 11);        // 5 symbols, whatever n_symbols says
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
    // The appended tasks, first example of (count 1, lengths 5-9, seed 1), answers checked by hand.
    using Ids = std::vector<std::int32_t>;
    auto first = [](const char* task) { return generate_algorithmic(task, 1, 5, 9, 10, 1)[0]; };
    // 0 1 1 + 0 0 1 = 6 + 4 = 10, little-endian 0 1 0 1.
    REQUIRE(first("binary_addition").src == Ids{2, 6, 7, 7, 5, 6, 6, 7, 4});
    REQUIRE(first("binary_addition").tgt == Ids{6, 7, 6, 7, 3});
    // 2 * 3 * 2 * 4 = 48 = 3 mod 5.
    REQUIRE(first("modular_arithmetic").src == Ids{2, 8, 13, 9, 13, 8, 13, 10, 4});
    REQUIRE(first("modular_arithmetic").tgt == Ids{9, 3});
    // 0 0 1 | 0 0 MISSING | FILL: w = 0 0 1, the hidden bit is 1.
    REQUIRE(first("missing_duplicate").src == Ids{2, 6, 6, 7, 6, 6, 8, 9, 4});
    REQUIRE(first("missing_duplicate").tgt == Ids{7, 3});
    // stack 0 1 1 0 0, POP, PUSH 0: 0 1 1 0 0 again, top to bottom 0 0 1 1 0.
    REQUIRE(first("stack_manipulation").src == Ids{2, 6, 7, 7, 6, 6, 8, 9, 4});
    REQUIRE(first("stack_manipulation").tgt == Ids{6, 6, 7, 7, 6, 3});
    // 0 0 1 1 0 0 1: 01 twice, 10 once: odd.
    REQUIRE(first("even_pairs").src == Ids{2, 6, 6, 7, 7, 6, 6, 7, 4});
    REQUIRE(first("even_pairs").tgt == Ids{7, 3});
    REQUIRE(first("bucket_sort").src == Ids{2, 8, 6, 9, 7, 8, 7, 10, 4});
    REQUIRE(first("bucket_sort").tgt == Ids{6, 7, 7, 8, 8, 9, 10, 3});
}

TEST_CASE("algorithmic/errors") {
    REQUIRE_THROWS_WITH(generate_algorithmic("copyy", 1, 1, 2, 5, 1),
                        Catch::Equals("unknown algorithmic task 'copyy'; known tasks: copy, reverse, sort, duplicate_string, "
                                      "odds_first, parity, cycle_navigation, addition, binary_addition, modular_arithmetic, "
                                      "missing_duplicate, stack_manipulation, even_pairs, bucket_sort."));
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

TEST_CASE("algorithmic/ruoss_tasks_errors") {
    const int P = 5, T = 7, MISS = 2, FILL = 3, POP = 2;
    const std::size_t k = 10;
    auto fails = [&](const char* task, const std::vector<std::int32_t>& prompt) {
        try {
            algorithmic_answer(task, prompt, k);
        } catch (const DataError& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    for (const char* task : {"binary_addition", "modular_arithmetic", "missing_duplicate", "stack_manipulation", "even_pairs",
                             "bucket_sort"}) {
        INFO("task " << task);
        REQUIRE_THAT(fails(task, {}), Catch::Contains("empty prompt"));
        REQUIRE_THAT(fails(task, {BOS_ID}), Catch::Contains("position 0 holds id 2"));
        REQUIRE(generate_algorithmic(task, 2, 1, 3, 1, 1).size() == 2);  // fixed alphabet: n_symbols unused
        REQUIRE_THROWS_WITH(generate_algorithmic(task, 1, 0, 2, 5, 1), Catch::Contains("min_len must be at least 1"));
    }
    // binary_addition: bits and at most one PLUS, with a bit on each side.
    REQUIRE_THAT(fails("binary_addition", sym({1, 2})),
                 Catch::Equals("algorithmic task 'binary_addition' prompt position 1 holds id 8; allowed are the symbol ids 6 .. 7 "
                               "and one PLUS id 5."));
    REQUIRE_THAT(fails("binary_addition", {6, ALGO_PLUS_ID, 7, ALGO_PLUS_ID, 7}), Catch::Contains("second PLUS (id 5) at position 3"));
    REQUIRE_THAT(fails("binary_addition", {ALGO_PLUS_ID, 7}), Catch::Contains("both numbers around it need at least one bit"));
    REQUIRE_THAT(fails("binary_addition", {7, ALGO_PLUS_ID}), Catch::Contains("PLUS at position 1 of 2"));
    // modular_arithmetic: residues at even places, operators at odd ones, odd length; PLUS is not its +.
    REQUIRE_THAT(fails("modular_arithmetic", sym({1, P})), Catch::Contains("has 2 symbols") && Catch::Contains("odd length"));
    REQUIRE_THAT(fails("modular_arithmetic", sym({1, T, P})), Catch::Contains("position 2 holds operator id 11; even positions hold residues"));
    REQUIRE_THAT(fails("modular_arithmetic", sym({1, 2, 3})), Catch::Contains("position 1 holds residue id 8; odd positions hold operators"));
    REQUIRE_THAT(fails("modular_arithmetic", sym({1, 8, 3})), Catch::Contains("position 1 holds id 14; allowed are the symbol ids 6 .. 13"));
    REQUIRE_THAT(fails("modular_arithmetic", {7, ALGO_PLUS_ID, 7}), Catch::Contains("position 1 holds id 5"));
    // missing_duplicate: w w with exactly one MISSING, FILL exactly at the end of an odd prompt.
    REQUIRE_THAT(fails("missing_duplicate", sym({0, 1, 0, 1})), Catch::Contains("holds no MISSING (id 8)"));
    REQUIRE_THAT(fails("missing_duplicate", sym({MISS, 1, MISS, 1})), Catch::Contains("MISSING (id 8) at positions 0 and 2"));
    REQUIRE_THAT(fails("missing_duplicate", sym({0, MISS, 1, 1})), Catch::Contains("is not w w: positions 0 and 2 differ"));
    REQUIRE_THAT(fails("missing_duplicate", sym({0, MISS, 0})), Catch::Contains("odd length 3 and must end with FILL (id 9)"));
    REQUIRE_THAT(fails("missing_duplicate", sym({FILL, MISS, 0, 0})), Catch::Contains("FILL (id 9) at position 0"));
    REQUIRE_THAT(fails("missing_duplicate", sym({0})), Catch::Contains("of one symbol must be the bit 1 (id 7)"));
    REQUIRE_THAT(fails("missing_duplicate", sym({0, MISS, 4})), Catch::Contains("position 2 holds id 10; allowed are the symbol ids 6 .. 9"));
    // stack_manipulation: the stack's bits come before the actions.
    REQUIRE_THAT(fails("stack_manipulation", sym({1, POP, 0})), Catch::Contains("bit id 6 at position 2 after an action"));
    REQUIRE_THAT(fails("stack_manipulation", sym({1, 5})), Catch::Contains("position 1 holds id 11; allowed are the symbol ids 6 .. 10"));
    // even_pairs and bucket_sort: their alphabets only.
    REQUIRE_THAT(fails("even_pairs", sym({0, 2})), Catch::Contains("position 1 holds id 8; allowed are the symbol ids 6 .. 7"));
    REQUIRE_THAT(fails("bucket_sort", sym({4, 5})), Catch::Contains("position 1 holds id 11; allowed are the symbol ids 6 .. 10"));
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
