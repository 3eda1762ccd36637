#include "experiments/tasks/synthetic.hpp"

#include <algorithm>

#include "autodiff/rng.hpp"
#include "experiments/config/config.hpp"
#include "experiments/data/corpus.hpp"

namespace relpos {

namespace {

std::string range_text(const LengthRange& r) { return "[" + std::to_string(r.min) + ", " + std::to_string(r.max) + "]"; }

// The data.synthetic keys these tasks read (read_data refuses the others where a config sets them).
std::vector<TaskOption> common_options() {
    return {
        {"n_symbols", "int", std::to_string(SYNTHETIC_DEFAULT_SYMBOLS), "distinct symbols (ids 4 .. 3 + n_symbols), >= 2"},
        {"train_len", "[min, max]", range_text(SyntheticConfig{}.train_len), "source lengths of training examples, 1 <= min <= max"},
        {"test_len", "[min, max]", range_text(SyntheticConfig{}.test_len),
         "source lengths of test examples (longer, for length generalization)"},
        {"train_size", "int", std::to_string(SyntheticConfig{}.train_size), "training examples"},
        {"valid_size", "int", std::to_string(SyntheticConfig{}.valid_size), "validation examples (lengths of train_len)"},
        {"test_size", "int", std::to_string(SyntheticConfig{}.test_size), "test examples"},
    };
}

enum class Task { copy, reverse, local_sum, swap_pairs };

Task parse_task(const std::string& name) {
    if (name == "copy") return Task::copy;
    if (name == "reverse") return Task::reverse;
    if (name == "local_sum") return Task::local_sum;
    if (name == "swap_pairs") return Task::swap_pairs;
    std::string known;
    for (const auto& n : synthetic_task_names()) known += (known.empty() ? "" : ", ") + n;
    throw DataError("unknown synthetic task '" + name + "'; known tasks: " + known + ".");
}

std::vector<std::int32_t> target_of(Task task, const std::vector<std::int32_t>& x, std::size_t n_symbols) {
    std::vector<std::int32_t> y(x.size());
    const auto n = static_cast<std::int32_t>(n_symbols);
    switch (task) {
        case Task::copy: y = x; break;
        case Task::reverse: std::reverse_copy(x.begin(), x.end(), y.begin()); break;
        case Task::local_sum: {
            std::int32_t prev = 0;  // x_{-1} = 0 (symbol value, not an id)
            for (std::size_t i = 0; i < x.size(); ++i) {
                const std::int32_t v = x[i] - FIRST_FREE_ID;
                y[i] = FIRST_FREE_ID + (v + prev) % n;
                prev = v;
            }
            break;
        }
        case Task::swap_pairs:
            y = x;
            for (std::size_t i = 0; i + 1 < x.size(); i += 2) std::swap(y[i], y[i + 1]);
            break;
    }
    return y;
}

}  // namespace

std::vector<TaskInfo> synthetic_tasks() {
    return {
        {"copy", "y = x: copy the source", common_options()},
        {"reverse", "y = x reversed (y_i = x_{L-1-i}): needs the sequence length", common_options()},
        {"local_sum", "y_i = (x_i + x_{i-1}) mod n_symbols with x_{-1} = 0: depends only on relative offsets 0, -1",
         common_options()},
        {"swap_pairs", "swap neighbours (y_{2j} = x_{2j+1}, y_{2j+1} = x_{2j}): depends only on relative offsets +-1",
         common_options()},
    };
}

std::vector<std::string> synthetic_task_names() {
    std::vector<std::string> names;
    for (const auto& t : synthetic_tasks()) names.push_back(t.name);
    return names;
}

std::vector<std::int32_t> synthetic_target(const std::string& task, const std::vector<std::int32_t>& src,
                                           std::size_t n_symbols) {
    const Task t = parse_task(task);
    for (std::size_t i = 0; i < src.size(); ++i)
        if (src[i] < FIRST_FREE_ID || src[i] >= FIRST_FREE_ID + static_cast<std::int32_t>(n_symbols))
            throw DataError("synthetic source position " + std::to_string(i) + " holds id " + std::to_string(src[i]) +
                            ", outside the symbol ids " + std::to_string(FIRST_FREE_ID) + " .. " +
                            std::to_string(FIRST_FREE_ID + static_cast<std::int32_t>(n_symbols) - 1) + ".");
    return target_of(t, src, n_symbols);
}

std::vector<Example> generate(const std::string& task, std::size_t count, std::size_t min_len, std::size_t max_len,
                              std::size_t n_symbols, std::uint64_t seed) {
    const Task t = parse_task(task);
    if (min_len == 0) throw DataError("synthetic task option min_len must be at least 1.");
    if (min_len > max_len)
        throw DataError("synthetic task option min_len (" + std::to_string(min_len) + ") must not exceed max_len (" +
                        std::to_string(max_len) + ").");
    if (n_symbols < 2 || n_symbols > 1000000)
        throw DataError("synthetic task option n_symbols must be between 2 and 1000000, not " +
                        std::to_string(n_symbols) + ".");
    Rng rng(seed);
    std::vector<Example> out(count);
    for (auto& ex : out) {
        const std::size_t len = min_len + static_cast<std::size_t>(rng.below(max_len - min_len + 1));
        ex.src.resize(len);
        for (auto& s : ex.src) s = FIRST_FREE_ID + static_cast<std::int32_t>(rng.below(n_symbols));
        ex.tgt = target_of(t, ex.src, n_symbols);
    }
    return out;
}

std::string format_ids(const std::vector<std::int32_t>& ids) {
    std::string out;
    for (std::size_t i = 0; i < ids.size(); ++i) {
        if (i) out += ' ';
        out += std::to_string(ids[i]);
    }
    return out;
}

}  // namespace relpos
