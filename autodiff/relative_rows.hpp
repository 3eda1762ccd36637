// The row kernels of Shaw's bucketed relative terms (autodiff/ops_relative.cpp), shared with attention's fused
// core (autodiff/ops_attention.cpp), which applies Transformer-XL's positional term one tile at a time.
#pragma once

#include <algorithm>
#include <cstddef>

namespace relpos::detail {

// bucket(i, j) = clip(j - p, k) + k with p = i + q_offset splits each query row into three runs of keys:
//   j <  a       bucket 0            (j - p <= -k)
//   a <= j < c   bucket j - p + k    (|j - p| < k)
//   j >= c       bucket 2k           (j - p >= k)
// with a = clamp(p - k + 1, 0, Lk) and c = clamp(p + k, a, Lk) (for k = 0 the middle run is empty and both
// ends are bucket 0). The kernels below walk these runs instead of a per-element index table: contiguous
// loops the compiler vectorises, and sums over the end runs in the order a per-element loop would add.
struct RowRuns {
    std::size_t a, c;
    long shift;  // bucket of key j in the middle run: j + shift
};

inline RowRuns row_runs(std::size_t i, std::size_t Lk, std::size_t k, std::size_t off) {
    const long p = static_cast<long>(i + off), K = static_cast<long>(k), L = static_cast<long>(Lk);
    const long a = std::clamp(p - K + 1, 0L, L);
    const long c = std::clamp(p + K, a, L);
    return {static_cast<std::size_t>(a), static_cast<std::size_t>(c), K - p};
}

// o[j] (+)= s[bucket(j)] over one row: the transposed scatter.
template <class T>
inline void gather_row(const RowRuns& rr, std::size_t Lk, std::size_t R, const T* s, T* o, bool add) {
    const T lo = s[0], hi = s[R - 1];
    const std::ptrdiff_t sh = rr.shift;
    if (add) {
        for (std::size_t j = 0; j < rr.a; ++j) o[j] += lo;
        for (std::size_t j = rr.a; j < rr.c; ++j) o[j] += s[static_cast<std::ptrdiff_t>(j) + sh];
        for (std::size_t j = rr.c; j < Lk; ++j) o[j] += hi;
    } else {
        for (std::size_t j = 0; j < rr.a; ++j) o[j] = lo;
        for (std::size_t j = rr.a; j < rr.c; ++j) o[j] = s[static_cast<std::ptrdiff_t>(j) + sh];
        for (std::size_t j = rr.c; j < Lk; ++j) o[j] = hi;
    }
}

// s[bucket(j)] += x[j] over one row (s has R = 2k+1 entries).
template <class T>
inline void scatter_row(const RowRuns& rr, std::size_t Lk, std::size_t R, const T* x, T* s) {
    T lo = s[0];
    for (std::size_t j = 0; j < rr.a; ++j) lo += x[j];
    s[0] = lo;
    const std::ptrdiff_t sh = rr.shift;
    for (std::size_t j = rr.a; j < rr.c; ++j) s[static_cast<std::ptrdiff_t>(j) + sh] += x[j];
    T hi = s[R - 1];
    for (std::size_t j = rr.c; j < Lk; ++j) hi += x[j];
    s[R - 1] = hi;
}

}  // namespace relpos::detail
