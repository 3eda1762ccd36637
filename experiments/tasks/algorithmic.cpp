#include "experiments/tasks/algorithmic.hpp"

#include <algorithm>

#include "autodiff/rng.hpp"
#include "experiments/data/corpus.hpp"

namespace relpos {

namespace {

enum class Task { copy, reverse, sort, duplicate_string, odds_first, parity, cycle_navigation, addition };

constexpr std::size_t CYCLE_LENGTH = 5;  // Delétang et al.'s default circle
constexpr std::size_t CYCLE_MOVES = 3;   // move values 0, 1, 2 = steps -1, 0, +1
constexpr std::size_t DIGITS = 10;       // addition is decimal

struct Entry {
    Task task;
    AlgoTaskInfo info;
};

const std::vector<Entry>& table() {
    static const std::vector<Entry> t{
        {Task::copy,
         {"copy", "answer = the prompt", "prompt and answer: n_symbols values", "Kazemnejad et al. 2023 (copy)", 0}},
        {Task::reverse,
         {"reverse", "answer = the prompt reversed", "prompt and answer: n_symbols values",
          "Kazemnejad et al. 2023 (reverse); Deletang et al. 2023 (reverse_string)", 0}},
        {Task::sort,
         {"sort", "answer = the prompt's symbols sorted ascending", "prompt and answer: n_symbols values",
          "Kazemnejad et al. 2023 (sort); Deletang et al. 2023 (bucket_sort: n_symbols = 5)", 0}},
        {Task::duplicate_string,
         {"duplicate_string", "answer = the prompt twice (w -> ww)", "prompt and answer: n_symbols values",
          "Deletang et al. 2023, Ruoss et al. 2023 (duplicate_string)", 0}},
        {Task::odds_first,
         {"odds_first", "answer = the symbols at odd positions x_1 x_3 .., then at even positions x_2 x_4 ..",
          "prompt and answer: n_symbols values", "Deletang et al. 2023, Ruoss et al. 2023 (odds_first)", 0}},
        {Task::parity,
         {"parity", "answer = one bit: 0 when the prompt has an even number of 1s, 1 when odd",
          "prompt: bits 0, 1; answer: 0 (even) or 1 (odd)",
          "Kazemnejad et al. 2023 (parity); Deletang et al. 2023 (parity_check)", 2}},
        {Task::cycle_navigation,
         {"cycle_navigation", "answer = the final place (0..4) after moves -1/0/+1 on a cycle of 5 from place 0",
          "prompt: moves 0, 1, 2 (= steps -1, 0, +1); answer: places 0 .. 4",
          "Deletang et al. 2023, Ruoss et al. 2023 (cycle_navigation)", CYCLE_LENGTH}},
        {Task::addition,
         {"addition",
          "answer = a + b for two n-digit decimal numbers, digits least-significant first, n + 1 answer digits",
          "prompt: digits 0 .. 9 and one PLUS; answer: digits 0 .. 9",
          "Kazemnejad et al. 2023 (addition); little-endian as in Deletang et al. 2023 (binary_addition)", DIGITS}},
    };
    return t;
}

std::string known_names() {
    std::string s;
    for (const auto& e : table()) s += (s.empty() ? "" : ", ") + e.info.name;
    return s;
}

const Entry& find(const std::string& name) {
    for (const auto& e : table())
        if (e.info.name == name) return e;
    throw DataError("unknown algorithmic task '" + name + "'; known tasks: " + known_names() + ".");
}

// How many values a prompt symbol may take: fewer than the answer's for cycle_navigation (3 moves, 5 places).
std::size_t input_values(Task t, std::size_t symbols) { return t == Task::cycle_navigation ? CYCLE_MOVES : symbols; }

// The answer, in symbol values, to a prompt in symbol values. For addition, `x` holds a's digits then b's.
std::vector<std::size_t> answer_values(Task t, const std::vector<std::size_t>& x) {
    const std::size_t n = x.size();
    std::vector<std::size_t> y;
    switch (t) {
        case Task::copy: y = x; break;
        case Task::reverse: y.assign(x.rbegin(), x.rend()); break;
        case Task::sort:
            y = x;
            std::sort(y.begin(), y.end());
            break;
        case Task::duplicate_string:
            y = x;
            y.insert(y.end(), x.begin(), x.end());
            break;
        case Task::odds_first:
            // 1-based odd positions are 0-based even indices. (Delétang et al.'s code takes the other half
            // first, against their paper and docstring; we follow the paper.)
            for (std::size_t i = 0; i < n; i += 2) y.push_back(x[i]);
            for (std::size_t i = 1; i < n; i += 2) y.push_back(x[i]);
            break;
        case Task::parity: {
            std::size_t bit = 0;
            for (auto v : x) bit ^= v;
            y = {bit};
            break;
        }
        case Task::cycle_navigation: {
            std::size_t place = 0;
            for (auto v : x) place = (place + CYCLE_LENGTH + v - 1) % CYCLE_LENGTH;  // step v - 1, kept >= 0
            y = {place};
            break;
        }
        case Task::addition: {
            // Least-significant digit first: answer digit i needs only the operands' digit i and the carry
            // from digit i - 1, so a left-to-right decoder never has to look ahead.
            const std::size_t digits = n / 2;
            std::size_t carry = 0;
            for (std::size_t i = 0; i < digits; ++i) {
                const std::size_t s = x[i] + x[digits + i] + carry;
                y.push_back(s % DIGITS);
                carry = s / DIGITS;
            }
            y.push_back(carry);
            break;
        }
    }
    return y;
}

std::vector<std::int32_t> to_ids(const std::vector<std::size_t>& values) {
    std::vector<std::int32_t> ids;
    ids.reserve(values.size());
    for (auto v : values) ids.push_back(algo_symbol_id(v));
    return ids;
}

// n_symbols matters only to the tasks without a fixed alphabet.
void check_symbols(const Entry& e, std::size_t n_symbols) {
    if (e.info.fixed_symbols == 0 && (n_symbols < 2 || n_symbols > 1000000))
        throw DataError("algorithmic task '" + e.info.name + "' option n_symbols must be between 2 and 1000000, not " +
                        std::to_string(n_symbols) + ".");
}

}  // namespace

std::vector<AlgoTaskInfo> algorithmic_tasks() {
    std::vector<AlgoTaskInfo> out;
    for (const auto& e : table()) out.push_back(e.info);
    return out;
}

std::vector<std::string> algorithmic_task_names() {
    std::vector<std::string> out;
    for (const auto& e : table()) out.push_back(e.info.name);
    return out;
}

std::size_t algorithmic_symbols(const std::string& task, std::size_t n_symbols) {
    const auto& e = find(task);
    return e.info.fixed_symbols ? e.info.fixed_symbols : n_symbols;
}

std::size_t algorithmic_vocab_size(const std::string& task, std::size_t n_symbols) {
    return ALGO_FIRST_SYMBOL_ID + algorithmic_symbols(task, n_symbols);
}

std::vector<Example> generate_algorithmic(const std::string& task, std::size_t count, std::size_t min_len,
                                          std::size_t max_len, std::size_t n_symbols, std::uint64_t seed) {
    const Entry& e = find(task);
    const Task t = e.task;
    check_symbols(e, n_symbols);
    if (min_len == 0) throw DataError("algorithmic task '" + task + "' option min_len must be at least 1.");
    if (min_len > max_len)
        throw DataError("algorithmic task '" + task + "' option min_len (" + std::to_string(min_len) +
                        ") must not exceed max_len (" + std::to_string(max_len) + ").");
    const std::size_t values = input_values(t, algorithmic_symbols(task, n_symbols));
    // Addition draws two operands of n digits; every other task one string of n symbols.
    const std::size_t operands = t == Task::addition ? 2 : 1;

    Rng rng(seed);
    std::vector<Example> out(count);
    for (auto& ex : out) {
        const std::size_t n = min_len + static_cast<std::size_t>(rng.below(max_len - min_len + 1));
        std::vector<std::size_t> x(operands * n);
        for (auto& v : x) v = static_cast<std::size_t>(rng.below(values));
        ex.src.reserve(x.size() + 3);
        ex.src.push_back(BOS_ID);
        for (std::size_t i = 0; i < x.size(); ++i) {
            if (operands == 2 && i == n) ex.src.push_back(ALGO_PLUS_ID);
            ex.src.push_back(algo_symbol_id(x[i]));
        }
        ex.src.push_back(ALGO_SEP_ID);
        ex.tgt = to_ids(answer_values(t, x));
        ex.tgt.push_back(EOS_ID);
    }
    return out;
}

std::vector<std::int32_t> algorithmic_answer(const std::string& task, const std::vector<std::int32_t>& prompt,
                                             std::size_t n_symbols) {
    const Entry& e = find(task);
    const Task t = e.task;
    check_symbols(e, n_symbols);
    const std::size_t values = input_values(t, algorithmic_symbols(task, n_symbols));
    if (prompt.empty()) throw DataError("algorithmic task '" + task + "' got an empty prompt; it needs at least one symbol.");

    std::vector<std::size_t> x;
    std::size_t plus_at = prompt.size();
    for (std::size_t i = 0; i < prompt.size(); ++i) {
        const std::int32_t id = prompt[i];
        if (t == Task::addition && id == ALGO_PLUS_ID && plus_at == prompt.size()) {
            plus_at = i;
            continue;
        }
        if (id < ALGO_FIRST_SYMBOL_ID || algo_symbol_value(id) >= values)
            throw DataError("algorithmic task '" + task + "' prompt position " + std::to_string(i) + " holds id " +
                            std::to_string(id) + "; allowed are the symbol ids " + std::to_string(ALGO_FIRST_SYMBOL_ID) +
                            " .. " + std::to_string(algo_symbol_id(values - 1)) +
                            (t == Task::addition ? " and one PLUS id " + std::to_string(ALGO_PLUS_ID) : std::string()) +
                            ".");
        x.push_back(algo_symbol_value(id));
    }
    if (t == Task::addition && (plus_at == prompt.size() || plus_at == 0 || 2 * plus_at + 1 != prompt.size()))
        throw DataError("an addition prompt must be two equally long digit strings joined by one PLUS id " +
                        std::to_string(ALGO_PLUS_ID) + ", not " + std::to_string(prompt.size()) + " ids with PLUS at " +
                        (plus_at == prompt.size() ? std::string("none") : std::to_string(plus_at)) + ".");
    return to_ids(answer_values(t, x));
}

std::vector<std::int32_t> algorithmic_prompt(const Example& ex) {
    if (ex.src.size() < 2 || ex.src.front() != BOS_ID || ex.src.back() != ALGO_SEP_ID)
        throw DataError("an algorithmic example's src must be BOS (id " + std::to_string(BOS_ID) + "), the prompt, SEP (id " +
                        std::to_string(ALGO_SEP_ID) + ").");
    return std::vector<std::int32_t>(ex.src.begin() + 1, ex.src.end() - 1);
}

std::size_t algorithmic_length(const std::string& task, const Example& ex) {
    const Task t = find(task).task;
    const std::size_t p = algorithmic_prompt(ex).size();
    return t == Task::addition ? p / 2 : p;  // addition: n digits + PLUS + n digits
}

}  // namespace relpos
