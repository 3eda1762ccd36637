// One training or evaluation example as token ids, and the special ids every vocabulary in relpos
// shares (the SentencePiece vocabularies are trained with exactly these ids; synthetic tasks use
// ids >= FIRST_FREE_ID for their symbols).
#pragma once

#include <cstdint>
#include <vector>

namespace relpos {

constexpr std::int32_t PAD_ID = 0;
constexpr std::int32_t UNK_ID = 1;
constexpr std::int32_t BOS_ID = 2;
constexpr std::int32_t EOS_ID = 3;
constexpr std::int32_t FIRST_FREE_ID = 4;

// src and tgt hold content ids only: no BOS/EOS, no padding (batching adds them).
struct Example {
    std::vector<std::int32_t> src, tgt;
};

}  // namespace relpos
