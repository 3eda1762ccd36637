// Procedurally generated algorithmic tasks in decoder-only form, for length generalization (Kazemnejad et
// al. 2023, "The Impact of Positional Encoding on Length Generalization in Transformers"; Ruoss et al.
// 2023, "Randomized Positional Encodings Boost Length Generalization of Transformers", whose tasks come
// from Delétang et al. 2023, "Neural Networks and the Chomsky Hierarchy").
//
// An example is a prompt and an answer. The model reads BOS prompt SEP answer EOS and is scored on the
// answer and EOS only, so Example::src = [BOS, prompt..., SEP] and Example::tgt = [answer..., EOS]
// (see experiments/data/example.hpp). The length n of an example is the task's input length: the number of
// prompt symbols, or for addition the number of digits of each operand. (modular_arithmetic's expressions
// have odd length: an even n gives n - 1 symbols, as in the reference code.)
//
// Vocabulary layout, the same for every task (a task's vocabulary is the ids below algorithmic_vocab_size):
//   0 PAD, 1 UNK, 2 BOS, 3 EOS          the ids every relpos vocabulary shares (UNK and PAD never occur)
//   4 ALGO_SEP_ID                       ends the prompt: the answer starts after it
//   5 ALGO_PLUS_ID                      joins the two operands of addition and binary_addition (unused by
//                                       the other tasks)
//   6 + v, v = 0 .. symbols - 1         symbol value v (ALGO_FIRST_SYMBOL_ID + v)
// Keeping SEP and PLUS at fixed ids whether a task uses them or not costs one unused embedding row and lets
// every task share one table of ids. A task that needs more marks than PLUS (operators, a hole, actions)
// gives them symbol values after its data values, as Delétang et al.'s one-hot inputs do, so the ids of the
// existing tasks never move:
//   modular_arithmetic   values 0 .. 4 residues, 5 '+', 6 '-', 7 '*'           (ids 6 .. 13)
//   missing_duplicate    values 0, 1 bits, 2 MISSING (the hidden place), 3 FILL (ends an odd prompt)  (ids 6 .. 9)
//   stack_manipulation   values 0, 1 bits, 2 POP, 3 PUSH 0, 4 PUSH 1             (ids 6 .. 10)
// Their answers use the data values only (residues, bits).
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
//                                                                  is this task with 5 symbols: bucket_sort)
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
//
// Appended for Ruoss et al. 2023's suite, following Delétang et al.'s code (tasks/*/*.py of
// google-deepmind/randomized_positional_encodings), whose sample_batch(length = n) defines what n means:
//   binary_addition     prompt a PLUS b (bits, least-significant first), n = the whole prompt, PLUS included:
//                       a has 1 .. n - 2 bits (uniform), b the other n - 1 - |a|, each a number uniform in
//                       [1, 2^bits - 1] written with exactly that many bits; answer = a + b, least-significant
//                       bit first, without leading zeros (so 1 .. max(|a|, |b|) + 1 bits). n <= 2 is too short
//                       for a PLUS: the prompt is one n-bit number and the answer that number.
//   modular_arithmetic  prompt r_1 o_1 r_2 .. r_k, residues mod 5 and operators + - *, n = 2k - 1 symbols (an
//                       even n gives n - 1); answer = one residue, the value mod 5 with * before + and -
//                       (1 - 1 - 1 = 4, 1 + 2 * 3 = 2)
//   missing_duplicate   prompt w w (w: n / 2 bits) with one place replaced by MISSING, and FILL at the end when
//                       n is odd; answer = one bit, the one MISSING hides. n = 1 is the reference's fixed
//                       example: prompt 1, answer 1.
//   stack_manipulation  prompt = a stack of 1 .. n - 1 bits (bottom to top), then actions POP / PUSH 0 / PUSH 1
//                       to n symbols (n = 1: one bit, no action); answer = the final stack top to bottom, from
//                       0 to n bits (POP on an empty stack does nothing; an empty answer is EOS alone)
//   even_pairs          prompt n bits; answer = one bit, the number of neighbour pairs 01 and 10 mod 2
//                       (1 exactly when x_1 != x_n)
//   bucket_sort         sort with the alphabet fixed at 5 values (Ruoss et al.'s constants.py), n symbols
// The answers of binary_addition and stack_manipulation vary in length with the example; the answer ends
// with EOS in both families (encoder-only models get one slot per answer token and EOS, where the reference
// pads every output to n + 1 places after a termination symbol).
std::vector<AlgoTaskInfo> algorithmic_tasks();
std::vector<std::string> algorithmic_task_names();

// The number of symbol values a task uses: n_symbols, or its fixed count (parity 2, cycle_navigation 5,
// addition 10, binary_addition 2, modular_arithmetic 8, missing_duplicate 4, stack_manipulation 5,
// even_pairs 2, bucket_sort 5; these ignore n_symbols). Throws DataError for an unknown task.
std::size_t algorithmic_symbols(const std::string& task, std::size_t n_symbols);

// Vocabulary size: ALGO_FIRST_SYMBOL_ID + algorithmic_symbols(task, n_symbols).
std::size_t algorithmic_vocab_size(const std::string& task, std::size_t n_symbols);

// `count` examples with lengths n uniform in [min_len, max_len] and symbols uniform over the task's values
// (for the structured tasks above: drawn as described there), all drawn from relpos::Rng(seed): the same arguments give the same examples on every machine. Use
// different seeds for training and evaluation sets. Throws DataError for an unknown task (listing the known
// ones), min_len == 0, min_len > max_len, or, for tasks that use it, n_symbols outside [2, 1000000].
std::vector<Example> generate_algorithmic(const std::string& task, std::size_t count, std::size_t min_len,
                                          std::size_t max_len, std::size_t n_symbols, std::uint64_t seed);

// The answer (ids, without EOS) to a prompt (the ids between BOS and SEP: symbol ids, and for addition
// and binary_addition the PLUS between the operands), so evaluation and tests can recompute it. Throws
// DataError when the prompt holds an id outside the task's symbols or does not have the task's form: for
// addition two equally long digit strings joined by one PLUS; binary_addition two nonempty bit strings
// joined by one PLUS, or one bit string; modular_arithmetic residues and operators alternating, odd length;
// missing_duplicate w w with exactly one MISSING (then FILL when odd), or the one-symbol prompt 1;
// stack_manipulation the stack's bits before every action.
std::vector<std::int32_t> algorithmic_answer(const std::string& task, const std::vector<std::int32_t>& prompt,
                                             std::size_t n_symbols);

// The prompt of an example: src without its BOS and SEP. Throws DataError when src is not BOS ... SEP.
std::vector<std::int32_t> algorithmic_prompt(const Example& ex);

// The length n of an example (prompt symbols; digits per operand for addition; binary_addition counts its
// PLUS; for modular_arithmetic an odd number, n - 1 for an example drawn at an even n). Throws DataError
// for an unknown task or an example that is not BOS ... SEP.
std::size_t algorithmic_length(const std::string& task, const Example& ex);

}  // namespace relpos
