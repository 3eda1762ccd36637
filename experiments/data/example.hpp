// One training or evaluation example as token ids, and the special ids every vocabulary in relpos
// shares (the SentencePiece vocabularies are trained with exactly these ids; synthetic tasks use
// ids >= FIRST_FREE_ID for their symbols).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace relpos {

constexpr std::int32_t PAD_ID = 0;
constexpr std::int32_t UNK_ID = 1;
constexpr std::int32_t BOS_ID = 2;
constexpr std::int32_t EOS_ID = 3;
constexpr std::int32_t FIRST_FREE_ID = 4;

// Encoder-decoder tasks: src and tgt hold content ids only, no BOS/EOS, no padding (batching adds them).
// Decoder-only tasks: the sequence is src ++ tgt, written whole by the task (BOS, separators, EOS
// included); src is context the loss does not score, tgt is what the model is trained to predict.
struct Example {
    std::vector<std::int32_t> src, tgt;
};

// One documented data.* option of a task, for `relpos list`.
struct TaskOption {
    std::string key, type, default_value, description;
};

}  // namespace relpos
