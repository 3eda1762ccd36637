// Procedurally generated algorithmic tasks in decoder-only form, for length generalization (Kazemnejad et
// al. 2023, "The Impact of Positional Encoding on Length Generalization in Transformers"; Ruoss et al.
// 2023, "Randomized Positional Encodings Boost Length Generalization of Transformers", whose tasks come
// from Delétang et al. 2023, "Neural Networks and the Chomsky Hierarchy").
//
// An example is a prompt and an answer. The model reads BOS prompt SEP answer EOS and is scored on the
// answer and EOS only, so Example::src = [BOS, prompt..., SEP] and Example::tgt = [answer..., EOS]
// (see experiments/data/example.hpp). The length n of an example is the task's input length: the number of
// prompt symbols, or for addition the number of digits of each operand.
//
// Vocabulary layout, the same for every task (a task's vocabulary is the ids below algorithmic_vocab_size):
//   0 PAD, 1 UNK, 2 BOS, 3 EOS          the ids every relpos vocabulary shares (UNK and PAD never occur)
//   4 ALGO_SEP_ID                       ends the prompt: the answer starts after it
//   5 ALGO_PLUS_ID                      joins the two operands of addition (unused by the other tasks)
//   6 + v, v = 0 .. symbols - 1         symbol value v (ALGO_FIRST_SYMBOL_ID + v)
// Keeping SEP and PLUS at fixed ids whether a task uses them or not costs one unused embedding row and lets
// every task share one table of ids.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "experiments/data/example.hpp"

namespace relpos {

constexpr std::int32_t ALGO_SEP_ID = FIRST_FREE_ID;           // 4
constexpr std::int32_t ALGO_PLUS_ID = FIRST_FREE_ID + 1;      // 5
constexpr std::int32_t ALGO_FIRST_SYMBOL_ID = FIRST_FREE_ID + 2;  // 6

// The id of symbol value v, and back.
inline std::int32_t algo_symbol_id(std::size_t v) { return ALGO_FIRST_SYMBOL_ID + static_cast<std::int32_t>(v); }
inline std::size_t algo_symbol_value(std::int32_t id) { return static_cast<std::size_t>(id - ALGO_FIRST_SYMBOL_ID); }

struct AlgoTaskInfo {
    std::string name;
    std::string summary;      // one line: what the answer is (for `relpos list`)
    std::string vocabulary;   // which symbol values the prompt and the answer use
    std::string source;       // the paper the task follows
    std::size_t fixed_symbols = 0;  // 0: the task uses n_symbols symbols; else it always uses this many
};

// The tasks, in a stable order (v = symbol value, x_1 .. x_n the prompt symbols):
//   copy              answer = x                                   n symbols
//   reverse           answer = x_n .. x_1                          n symbols
//   sort              answer = x sorted ascending                  n symbols (Delétang et al.'s bucket_sort
//                                                                  is this task with n_symbols = 5)
//   duplicate_string  answer = x x                                 2n symbols
//   odds_first        answer = x_1 x_3 x_5 .. x_2 x_4 ..           n symbols
//   parity            x is bits; answer = one bit, x_1 xor .. xor x_n (0: even number of 1s, 1: odd)
//   cycle_navigation  x are moves v in {0, 1, 2} = step v - 1 on a cycle of 5 places starting at 0;
//                     answer = one symbol, the final place (sum of steps mod 5)
//   addition          two n-digit decimal numbers, least-significant digit first, joined by PLUS;
//                     answer = their sum, n + 1 digits, least-significant digit first
//
// Addition is written least-significant digit first (little-endian), operands and answer alike, as in
// Delétang et al.'s binary_addition (used by Ruoss et al.) and as Lee et al. 2023 ("Teaching Arithmetic to
// Small Transformers") and McLeish et al. 2024 ("Transformers Can Do Arithmetic with the Right
// Embeddings") found learnable: the carry then flows in the order the decoder writes, so answer digit i
// depends only on the operands' digits i and earlier ones, and what is left to learn is where those digits
// are, i.e. the position encoding's part. Kazemnejad et al. write the numbers most-significant first and
// add a scratchpad; relpos has no scratchpad. Digits are uniform, so operands may have leading zeros and
// every answer has exactly n + 1 digits (the last is the final carry, 0 or 1).
std::vector<AlgoTaskInfo> algorithmic_tasks();
std::vector<std::string> algorithmic_task_names();

// The number of symbol values a task uses: n_symbols, or its fixed count (parity 2, cycle_navigation 5,
// addition 10; these ignore n_symbols). Throws DataError for an unknown task.
std::size_t algorithmic_symbols(const std::string& task, std::size_t n_symbols);

// Vocabulary size: ALGO_FIRST_SYMBOL_ID + algorithmic_symbols(task, n_symbols).
std::size_t algorithmic_vocab_size(const std::string& task, std::size_t n_symbols);

// `count` examples with lengths n uniform in [min_len, max_len] and symbols uniform over the task's values,
// all drawn from relpos::Rng(seed): the same arguments give the same examples on every machine. Use
// different seeds for training and evaluation sets. Throws DataError for an unknown task (listing the known
// ones), min_len == 0, min_len > max_len, or, for tasks that use it, n_symbols outside [2, 1000000].
std::vector<Example> generate_algorithmic(const std::string& task, std::size_t count, std::size_t min_len,
                                          std::size_t max_len, std::size_t n_symbols, std::uint64_t seed);

// The answer (ids, without EOS) to a prompt (the ids between BOS and SEP: symbol ids, and for addition
// the PLUS between the operands), so evaluation and tests can recompute it. Throws DataError when the
// prompt holds an id outside the task's symbols or, for addition, is not two equally long digit strings
// joined by one PLUS.
std::vector<std::int32_t> algorithmic_answer(const std::string& task, const std::vector<std::int32_t>& prompt,
                                             std::size_t n_symbols);

// The prompt of an example: src without its BOS and SEP. Throws DataError when src is not BOS ... SEP.
std::vector<std::int32_t> algorithmic_prompt(const Example& ex);

// The length n of an example (prompt symbols; digits per operand for addition). Throws DataError for an
// unknown task or an example that is not BOS ... SEP.
std::size_t algorithmic_length(const std::string& task, const Example& ex);

}  // namespace relpos
