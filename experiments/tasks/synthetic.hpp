// Seeded synthetic sequence-to-sequence tasks for length generalization: train on one length range,
// test on another (longer) one. Symbols are ids FIRST_FREE_ID .. FIRST_FREE_ID + n_symbols - 1, so a
// task's vocabulary is synthetic_vocab_size(n_symbols) ids including PAD/UNK/BOS/EOS.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "experiments/data/example.hpp"

namespace relpos {

struct TaskInfo {
    std::string name;
    std::string summary;  // one line for `relpos list`
    std::vector<TaskOption> options;
};

// The tasks generate() knows, in a stable order:
//   copy        y = x
//   reverse     y_i = x_{L-1-i}                         (needs absolute positions / the length)
//   local_sum   y_i = (x_i + x_{i-1}) mod n_symbols, x_{-1} = 0   (only relative offsets 0 and -1)
//   swap_pairs  y_{2j} = x_{2j+1}, y_{2j+1} = x_{2j}; an odd last symbol stays  (only offsets +-1)
// Sums and swaps act on symbol values v = id - FIRST_FREE_ID.
std::vector<TaskInfo> synthetic_tasks();
std::vector<std::string> synthetic_task_names();

// Default number of distinct symbols.
constexpr std::size_t SYNTHETIC_DEFAULT_SYMBOLS = 20;

// Vocabulary size of a synthetic task: the 4 special ids plus the symbols.
inline std::size_t synthetic_vocab_size(std::size_t n_symbols) { return FIRST_FREE_ID + n_symbols; }

// `count` examples of `task` with source lengths drawn uniformly from [min_len, max_len] and symbols
// uniformly from n_symbols values, all from relpos::Rng(seed): the same arguments give the same data.
// Use different seeds for the train and test sets. Throws DataError for an unknown task (listing the
// known ones), min_len == 0, min_len > max_len, or n_symbols < 2.
std::vector<Example> generate(const std::string& task, std::size_t count, std::size_t min_len, std::size_t max_len,
                              std::size_t n_symbols, std::uint64_t seed);

// The target of `task` for one source (symbol ids); exposed so evaluation and tests can recompute it.
std::vector<std::int32_t> synthetic_target(const std::string& task, const std::vector<std::int32_t>& src,
                                           std::size_t n_symbols);

// Ids as space-separated decimal text ("5 9 4"), for hypothesis files and BLEU with tok:none.
std::string format_ids(const std::vector<std::int32_t>& ids);

}  // namespace relpos
