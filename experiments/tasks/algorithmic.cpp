#include "experiments/tasks/algorithmic.hpp"

#include <algorithm>

#include "autodiff/rng.hpp"
#include "experiments/data/corpus.hpp"

namespace relpos {

namespace {

enum class Task {
    copy, reverse, sort, duplicate_string, odds_first, parity, cycle_navigation, addition,
    // Appended for Ruoss et al. 2023's suite (taken from Delétang et al. 2023); the tasks above keep their data.
    binary_addition, modular_arithmetic, missing_duplicate, stack_manipulation, even_pairs, bucket_sort
};

constexpr std::size_t CYCLE_LENGTH = 5;  // Delétang et al.'s default circle
constexpr std::size_t CYCLE_MOVES = 3;   // move values 0, 1, 2 = steps -1, 0, +1
constexpr std::size_t DIGITS = 10;       // addition is decimal

// Symbol values of the appended tasks (algorithmic.hpp lists them).
constexpr std::size_t BITS = 2;            // values 0, 1
constexpr std::size_t MODULUS = 5;         // modular_arithmetic: residues 0 .. 4 (Ruoss et al.'s constants.py)
constexpr std::size_t MOD_PLUS = MODULUS;  // then the operators + - *, as values 5, 6, 7
constexpr std::size_t MOD_MINUS = MODULUS + 1;
constexpr std::size_t MOD_TIMES = MODULUS + 2;
constexpr std::size_t MOD_VALUES = MODULUS + 3;
constexpr std::size_t MISSING = 2;         // missing_duplicate: the omitted symbol's place
constexpr std::size_t FILL = 3;            // missing_duplicate: ends a prompt of odd length
constexpr std::size_t MISSING_VALUES = 4;
constexpr std::size_t POP = 2;             // stack_manipulation: the actions after the stack's bits
constexpr std::size_t PUSH_0 = 3;
constexpr std::size_t PUSH_1 = 4;
constexpr std::size_t STACK_VALUES = 5;
constexpr std::size_t BUCKETS = 5;         // bucket_sort's alphabet (Ruoss et al.'s constants.py)

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
        {Task::binary_addition,
         {"binary_addition",
          "answer = a + b in binary, least-significant bit first, no leading zeros; n = the prompt a PLUS b",
          "prompt: bits 0, 1 and one PLUS (none for n <= 2: one number); answer: bits 0, 1",
          "Deletang et al. 2023, Ruoss et al. 2023 (binary_addition)", BITS}},
        {Task::modular_arithmetic,
         {"modular_arithmetic",
          "answer = the value mod 5 of x_1 o x_2 o .. (o in + - *, * first); n odd, even n gives n - 1 symbols",
          "prompt: residues 0 .. 4 with operators 5 (+), 6 (-), 7 (*) between them; answer: residues 0 .. 4",
          "Deletang et al. 2023, Ruoss et al. 2023 (modular_arithmetic, modulus 5)", MOD_VALUES}},
        {Task::missing_duplicate,
         {"missing_duplicate",
          "answer = the bit that MISSING hides in the prompt w w (w of n/2 bits; FILL ends an odd n)",
          "prompt: bits 0, 1, 2 (MISSING), 3 (FILL); answer: bits 0, 1",
          "Deletang et al. 2023, Ruoss et al. 2023 (missing_duplicate_string)", MISSING_VALUES}},
        {Task::stack_manipulation,
         {"stack_manipulation",
          "answer = the stack top to bottom after the actions; prompt = stack bits bottom to top, then actions",
          "prompt: bits 0, 1, then actions 2 (POP), 3 (PUSH 0), 4 (PUSH 1); answer: bits 0, 1 (may be empty)",
          "Deletang et al. 2023, Ruoss et al. 2023 (stack_manipulation)", STACK_VALUES}},
        {Task::even_pairs,
         {"even_pairs", "answer = one bit: the number of pairs 01 and 10 in the prompt mod 2 (1 iff x_1 != x_n)",
          "prompt: bits 0, 1; answer: 0 (even) or 1 (odd)", "Deletang et al. 2023, Ruoss et al. 2023 (even_pairs)",
          BITS}},
        {Task::bucket_sort,
         {"bucket_sort", "answer = the prompt's symbols sorted ascending (sort over a fixed alphabet of 5)",
          "prompt and answer: values 0 .. 4, whatever n_symbols says",
          "Deletang et al. 2023, Ruoss et al. 2023 (bucket_sort, vocab_size 5)", BUCKETS}},
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

std::vector<std::int32_t> to_ids(const std::vector<std::size_t>& values) {
    std::vector<std::int32_t> ids;
    ids.reserve(values.size());
    for (auto v : values) ids.push_back(algo_symbol_id(v));
    return ids;
}

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
        case Task::even_pairs: {
            // Each unequal neighbour pair (01 or 10) flips the bit.
            std::size_t bit = 0;
            for (std::size_t i = 1; i < n; ++i) bit ^= static_cast<std::size_t>(x[i] != x[i - 1]);
            y = {bit};
            break;
        }
        case Task::bucket_sort:
            y = x;
            std::sort(y.begin(), y.end());
            break;
        case Task::binary_addition:
        case Task::modular_arithmetic:
        case Task::missing_duplicate:
        case Task::stack_manipulation:
            break;  // prompts with structure: structured_answer reads them
    }
    return y;
}

// The appended tasks whose prompt has a structure (operands, operators, a marker, a stack then actions):
// they draw it with sample_structured and read it back, checked, with structured_answer. The others draw
// n independent uniform symbols, as the original eight do.
bool structured(Task t) {
    return t == Task::binary_addition || t == Task::modular_arithmetic || t == Task::missing_duplicate ||
           t == Task::stack_manipulation;
}

[[noreturn]] void bad_prompt(const std::string& task, const std::string& what) {
    throw DataError("algorithmic task '" + task + "' prompt " + what + ".");
}

// The symbol value at prompt position i, which must be below `values` (else a DataError naming the ids allowed).
std::size_t value_at(const std::string& task, const std::vector<std::int32_t>& prompt, std::size_t i, std::size_t values,
                     const std::string& also_allowed = "") {
    const std::int32_t id = prompt[i];
    if (id < ALGO_FIRST_SYMBOL_ID || algo_symbol_value(id) >= values)
        bad_prompt(task, "position " + std::to_string(i) + " holds id " + std::to_string(id) + "; allowed are the symbol ids " +
                             std::to_string(ALGO_FIRST_SYMBOL_ID) + " .. " + std::to_string(algo_symbol_id(values - 1)) +
                             also_allowed);
    return algo_symbol_value(id);
}

// n bits, uniform; with `nonzero`, drawn again while all are 0 (a number uniform in [1, 2^n - 1]).
std::vector<std::size_t> draw_bits(Rng& rng, std::size_t n, bool nonzero) {
    std::vector<std::size_t> b(n);
    for (;;) {
        for (auto& v : b) v = static_cast<std::size_t>(rng.below(BITS));
        if (!nonzero || std::find(b.begin(), b.end(), 1) != b.end()) return b;
    }
}

// A prompt of a structured task whose length is n (as Delétang et al.'s sample_batch(length = n) draws it),
// in symbol ids; binary_addition's PLUS is ALGO_PLUS_ID.
std::vector<std::int32_t> sample_structured(Task t, std::size_t n, Rng& rng) {
    std::vector<std::int32_t> p;
    switch (t) {
        case Task::binary_addition: {
            if (n <= 2) return to_ids(draw_bits(rng, n, false));  // too short for a PLUS: one number alone
            // a has 1 .. n - 2 bits and b the rest of the n - 1 places; each is a nonzero number written with
            // exactly that many bits, least-significant first (so its last bits may be 0).
            const std::size_t la = 1 + static_cast<std::size_t>(rng.below(n - 2));
            const auto a = draw_bits(rng, la, true);
            const auto b = draw_bits(rng, n - 1 - la, true);
            p = to_ids(a);
            p.push_back(ALGO_PLUS_ID);
            for (auto v : b) p.push_back(algo_symbol_id(v));
            return p;
        }
        case Task::modular_arithmetic: {
            const std::size_t m = n % 2 == 1 ? n : n - 1;  // expressions have odd length
            for (std::size_t i = 0; i < m; ++i)
                p.push_back(algo_symbol_id(i % 2 == 0 ? rng.below(MODULUS) : MOD_PLUS + rng.below(3)));
            return p;
        }
        case Task::missing_duplicate: {
            if (n == 1) return {algo_symbol_id(1)};  // Delétang et al.'s fixed example for n = 1: 1 -> 1
            const std::size_t k = n / 2;
            const auto w = draw_bits(rng, k, false);
            const std::size_t hole = static_cast<std::size_t>(rng.below(2 * k));
            for (std::size_t i = 0; i < 2 * k; ++i) p.push_back(algo_symbol_id(i == hole ? MISSING : w[i % k]));
            if (n % 2 == 1) p.push_back(algo_symbol_id(FILL));
            return p;
        }
        case Task::stack_manipulation: {
            // 1 .. n - 1 stack bits (bottom to top), then actions to n symbols; n = 1 is one bit, no action.
            const std::size_t bits = n == 1 ? 1 : 1 + static_cast<std::size_t>(rng.below(n - 1));
            p = to_ids(draw_bits(rng, bits, false));
            for (std::size_t i = bits; i < n; ++i) p.push_back(algo_symbol_id(POP + rng.below(3)));
            return p;
        }
        default: return p;  // not structured
    }
}

// The answer (ids) to a structured task's prompt (ids), after checking the prompt has the task's form.
std::vector<std::int32_t> structured_answer(const std::string& task, Task t, const std::vector<std::int32_t>& prompt) {
    const std::size_t n = prompt.size();
    std::vector<std::size_t> y;
    switch (t) {
        case Task::binary_addition: {
            // a PLUS b, or one number alone (the n <= 2 form); both little-endian.
            std::size_t plus = n;
            std::vector<std::size_t> a, b;
            for (std::size_t i = 0; i < n; ++i) {
                if (prompt[i] == ALGO_PLUS_ID) {
                    if (plus != n)
                        bad_prompt(task, "holds a second PLUS (id " + std::to_string(ALGO_PLUS_ID) + ") at position " +
                                             std::to_string(i) + "; it must be a PLUS b or one number, in bits");
                    plus = i;
                    continue;
                }
                (plus == n ? a : b).push_back(value_at(task, prompt, i, BITS, " and one PLUS id " + std::to_string(ALGO_PLUS_ID)));
            }
            if (plus != n && (a.empty() || b.empty()))
                bad_prompt(task, "has PLUS at position " + std::to_string(plus) + " of " + std::to_string(n) +
                                     "; both numbers around it need at least one bit");
            std::size_t carry = 0;
            for (std::size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
                const std::size_t s = (i < a.size() ? a[i] : 0) + (i < b.size() ? b[i] : 0) + carry;
                y.push_back(s % 2);
                carry = s / 2;
            }
            y.push_back(carry);
            while (y.size() > 1 && y.back() == 0) y.pop_back();  // no leading zeros (0 is the one bit 0)
            break;
        }
        case Task::modular_arithmetic: {
            if (n % 2 == 0)
                bad_prompt(task, "has " + std::to_string(n) +
                                     " symbols; an expression is a residue, then operator and residue pairs (odd length)");
            // * binds first: `term` is the running product, `sum` the terms before it (mod 5, kept >= 0).
            std::size_t sum = 0, term = 0;
            bool negative = false;
            for (std::size_t i = 0; i < n; ++i) {
                const std::size_t v = value_at(task, prompt, i, MOD_VALUES);
                if (i % 2 == 0 && v >= MODULUS)
                    bad_prompt(task, "position " + std::to_string(i) + " holds operator id " + std::to_string(prompt[i]) +
                                         "; even positions hold residues 0 .. 4 (ids " + std::to_string(algo_symbol_id(0)) +
                                         " .. " + std::to_string(algo_symbol_id(MODULUS - 1)) + ")");
                if (i % 2 == 1 && v < MODULUS)
                    bad_prompt(task, "position " + std::to_string(i) + " holds residue id " + std::to_string(prompt[i]) +
                                         "; odd positions hold operators + - * (ids " + std::to_string(algo_symbol_id(MOD_PLUS)) +
                                         " .. " + std::to_string(algo_symbol_id(MOD_TIMES)) + ")");
                if (i == 0) {
                    term = v;
                } else if (i % 2 == 0) {
                    term = prompt[i - 1] == algo_symbol_id(MOD_TIMES) ? term * v % MODULUS : v;
                } else if (v != MOD_TIMES) {  // + or -: the term so far is complete
                    sum = (sum + (negative ? MODULUS - term : term)) % MODULUS;
                    negative = v == MOD_MINUS;
                }
            }
            y = {(sum + (negative ? MODULUS - term : term)) % MODULUS};
            break;
        }
        case Task::missing_duplicate: {
            std::vector<std::size_t> x;
            for (std::size_t i = 0; i < n; ++i) x.push_back(value_at(task, prompt, i, MISSING_VALUES));
            if (n == 1) {
                if (x[0] != 1)
                    bad_prompt(task, "of one symbol must be the bit 1 (id " + std::to_string(algo_symbol_id(1)) +
                                         "), the fixed n = 1 example, not id " + std::to_string(prompt[0]));
                y = {1};
                break;
            }
            // w w with one place MISSING, then FILL when n is odd.
            const std::size_t body = n - n % 2, k = body / 2;
            if (n % 2 == 1 && x[n - 1] != FILL)
                bad_prompt(task, "has odd length " + std::to_string(n) + " and must end with FILL (id " +
                                     std::to_string(algo_symbol_id(FILL)) + ")");
            std::size_t hole = body;
            for (std::size_t i = 0; i < body; ++i) {
                if (x[i] == FILL)
                    bad_prompt(task, "holds FILL (id " + std::to_string(prompt[i]) + ") at position " + std::to_string(i) +
                                         "; only a prompt of odd length ends with one");
                if (x[i] == MISSING) {
                    if (hole != body)
                        bad_prompt(task, "holds MISSING (id " + std::to_string(prompt[i]) + ") at positions " +
                                             std::to_string(hole) + " and " + std::to_string(i) + "; it must hold exactly one");
                    hole = i;
                }
            }
            if (hole == body)
                bad_prompt(task, "holds no MISSING (id " + std::to_string(algo_symbol_id(MISSING)) +
                                     "); it must be w w with exactly one symbol replaced by MISSING");
            for (std::size_t i = 0; i < k; ++i)
                if (i != hole && i + k != hole && x[i] != x[i + k])
                    bad_prompt(task, "is not w w: positions " + std::to_string(i) + " and " + std::to_string(i + k) +
                                         " differ");
            y = {x[hole < k ? hole + k : hole - k]};
            break;
        }
        case Task::stack_manipulation: {
            std::vector<std::size_t> stack;  // bottom to top
            bool acting = false;
            for (std::size_t i = 0; i < n; ++i) {
                const std::size_t v = value_at(task, prompt, i, STACK_VALUES);
                if (v < BITS) {
                    if (acting)
                        bad_prompt(task, "holds the bit id " + std::to_string(prompt[i]) + " at position " + std::to_string(i) +
                                             " after an action; the stack's bits come first, then the actions");
                    stack.push_back(v);
                } else {
                    acting = true;
                    if (v == POP) {
                        if (!stack.empty()) stack.pop_back();  // POP on an empty stack does nothing
                    } else {
                        stack.push_back(v - PUSH_0);
                    }
                }
            }
            y.assign(stack.rbegin(), stack.rend());  // top to bottom
            break;
        }
        default: break;
    }
    return to_ids(y);
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
        if (structured(t)) {
            const auto prompt = sample_structured(t, n, rng);
            ex.src.reserve(prompt.size() + 2);
            ex.src.push_back(BOS_ID);
            ex.src.insert(ex.src.end(), prompt.begin(), prompt.end());
            ex.src.push_back(ALGO_SEP_ID);
            ex.tgt = structured_answer(task, t, prompt);
            ex.tgt.push_back(EOS_ID);
            continue;
        }
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
    if (structured(t)) return structured_answer(task, t, prompt);

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
