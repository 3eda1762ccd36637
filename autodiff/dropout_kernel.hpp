// The inverted-dropout kernel, shared by the dropout op and linear's relu + dropout epilogue so both
// draw and decide exactly alike (the same stream of draws gives the same mask).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "autodiff/rng.hpp"

namespace relpos::detail {

template <class T>
inline T dropout_scale(double p) { return T(1) / T(1 - p); }

// Decisions per buffer of draws: 8 KiB of draws, stays in L1.
constexpr std::size_t kDropoutChunk = 4096;

// The keep mask of n decisions: keep[i] = 1 with probability 1 - p, else 0. Decision i is the i-th 16-bit
// slice of the stream of 64-bit draws (slice j of a draw is bits 16j..16j+15: four decisions per draw, p
// resolved to 1/65536, the same draws for float and double). The draws are a serial chain; they go to a small
// buffer first, so the decisions run as a vector loop over it.
inline void dropout_mask(std::size_t n, double p, Rng& rng, std::uint8_t* keep) {
    static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "dropout reads four decisions per draw as uint16");
    const std::uint32_t thresh = static_cast<std::uint32_t>(p * 65536.0 + 0.5);
    std::uint64_t draws[kDropoutChunk / 4];
    std::uint16_t slices[kDropoutChunk];
    for (std::size_t c0 = 0; c0 < n; c0 += kDropoutChunk) {
        const std::size_t m = std::min(kDropoutChunk, n - c0);
        for (std::size_t d = 0; d < (m + 3) / 4; ++d) draws[d] = rng.next_u64();
        std::memcpy(slices, draws, m * sizeof(std::uint16_t));
        std::uint8_t* __restrict k = keep + c0;
        for (std::size_t i = 0; i < m; ++i) k[i] = slices[i] >= thresh;
    }
}

// Keeps element i with probability 1 - p: keep[i] as dropout_mask draws it, and y[i] = x[i] * (keep[i] * 1 /
// (1 - p)). y may be x (in place). A chunk's decisions, then its scaling, while they are in L1.
template <class T>
inline void dropout_forward(const T* x, T* y, std::size_t n, double p, Rng& rng, std::uint8_t* keep) {
    const T scale = dropout_scale<T>(p);
    for (std::size_t c0 = 0; c0 < n; c0 += kDropoutChunk) {
        const std::size_t m = std::min(kDropoutChunk, n - c0);
        dropout_mask(m, p, rng, keep + c0);  // one chunk: the same draws as over the whole
        const std::uint8_t* __restrict k = keep + c0;
        if (x == y) {
            T* __restrict yi = y + c0;
            for (std::size_t i = 0; i < m; ++i) yi[i] = yi[i] * (T(k[i]) * scale);
        } else {
            const T* __restrict xi = x + c0;
            T* __restrict yi = y + c0;
            for (std::size_t i = 0; i < m; ++i) yi[i] = xi[i] * (T(k[i]) * scale);
        }
    }
}

}  // namespace relpos::detail
