// Vectorised row kernels for the softmax family (xsimd, whatever SIMD width the build targets):
// std::exp in a loop is a scalar libm call per element, and in a (tokens x vocab) cross-entropy that
// was most of the loss's cost. Each function walks a row left to right in fixed-width blocks (the
// tail padded, never computed another way), so its result depends only on the row, not on how rows
// are split between threads.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>

#include <xsimd/xsimd.hpp>

namespace relpos::vec {

template <class T>
using Batch = xsimd::batch<T>;

// max_j x[j]
template <class T>
T row_max(const T* x, std::size_t n) {
    constexpr std::size_t W = Batch<T>::size;
    T out = -std::numeric_limits<T>::infinity();
    std::size_t j = 0;
    if (n >= W) {
        Batch<T> m = Batch<T>::load_unaligned(x);
        for (j = W; j + W <= n; j += W) m = xsimd::max(m, Batch<T>::load_unaligned(x + j));
        alignas(64) T buf[W];
        m.store_aligned(buf);
        for (std::size_t i = 0; i < W; ++i) out = std::max(out, buf[i]);
    }
    for (; j < n; ++j) out = std::max(out, x[j]);
    return out;
}

// sum_j exp(x[j] - shift) and sum_j x[j]
template <class T>
void row_sum_exp(const T* x, std::size_t n, T shift, T& sum_exp, T& sum_x) {
    constexpr std::size_t W = Batch<T>::size;
    const Batch<T> s(shift);
    Batch<T> se(T(0)), sx(T(0));
    std::size_t j = 0;
    for (; j + W <= n; j += W) {
        const Batch<T> v = Batch<T>::load_unaligned(x + j);
        se += xsimd::exp(v - s);
        sx += v;
    }
    if (j < n) {  // the tail as one more block: -inf adds exp(-inf) = 0, and 0 to the plain sum
        alignas(64) T a[W], b[W];
        for (std::size_t i = 0; i < W; ++i) {
            a[i] = j + i < n ? x[j + i] : -std::numeric_limits<T>::infinity();
            b[i] = j + i < n ? x[j + i] : T(0);
        }
        se += xsimd::exp(Batch<T>::load_aligned(a) - s);
        sx += Batch<T>::load_aligned(b);
    }
    sum_exp = xsimd::hadd(se);
    sum_x = xsimd::hadd(sx);
}

// out[j] = a * exp(x[j] - shift) + b, or out[j] += ... when accumulate
template <class T>
void row_affine_exp(const T* x, std::size_t n, T shift, T a, T b, T* out, bool accumulate) {
    constexpr std::size_t W = Batch<T>::size;
    const Batch<T> s(shift), va(a), vb(b);
    std::size_t j = 0;
    for (; j + W <= n; j += W) {
        Batch<T> r = xsimd::fma(va, xsimd::exp(Batch<T>::load_unaligned(x + j) - s), vb);
        if (accumulate) r += Batch<T>::load_unaligned(out + j);
        r.store_unaligned(out + j);
    }
    if (j < n) {
        alignas(64) T t[W];
        for (std::size_t i = 0; i < W; ++i) t[i] = j + i < n ? x[j + i] : shift;
        alignas(64) T r[W];
        xsimd::fma(va, xsimd::exp(Batch<T>::load_aligned(t) - s), vb).store_aligned(r);
        for (std::size_t i = 0; j + i < n; ++i) out[j + i] = accumulate ? out[j + i] + r[i] : r[i];
    }
}

}  // namespace relpos::vec
