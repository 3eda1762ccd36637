// Vectorised row kernels for the softmax family (xsimd, whatever SIMD width the build targets):
// std::exp in a loop is a scalar libm call per element, and in a (tokens x vocab) cross-entropy that
// was most of the loss's cost. Each function walks a row left to right in fixed-width blocks (the
// tail padded, never computed another way), so its result depends only on the row, not on how rows
// are split between threads.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
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

// sum_j x[j] and sum_j a[j] * b[j] in one fixed order whatever the build's SIMD width: eight running
// partial sums (element j goes to partial j mod 8, left to right), the tail past the last full eight
// added to them the same way, then the partials summed pairwise ((0+4)+(2+6))+((1+5)+(3+7)). A plain
// `s += x[j]` is one chain of dependent adds (the compiler may not reorder a float sum): at rows of 64 the
// softmax's sums cost more than its exps.
namespace detail {
template <class T>
struct Lanes8Of {
    typedef T type __attribute__((vector_size(8 * sizeof(T))));
};
template <class T>
using Lanes8 = typename Lanes8Of<T>::type;
template <class T>
inline T reduce8(Lanes8<T> a) {
    return ((a[0] + a[4]) + (a[2] + a[6])) + ((a[1] + a[5]) + (a[3] + a[7]));
}
}  // namespace detail

template <class T>
T row_sum8(const T* x, std::size_t n) {
    using V = detail::Lanes8<T>;
    V acc{};
    std::size_t j = 0;
    for (; j + 8 <= n; j += 8) {
        V v;
        std::memcpy(&v, x + j, sizeof v);
        acc += v;
    }
    for (std::size_t i = 0; j + i < n; ++i) acc[i] += x[j + i];
    return detail::reduce8<T>(acc);
}

template <class T>
T row_dot8(const T* a, const T* b, std::size_t n) {
    using V = detail::Lanes8<T>;
    V acc{};
    std::size_t j = 0;
    for (; j + 8 <= n; j += 8) {
        V va, vb;
        std::memcpy(&va, a + j, sizeof va);
        std::memcpy(&vb, b + j, sizeof vb);
        acc += va * vb;
    }
    for (std::size_t i = 0; j + i < n; ++i) acc[i] += a[j + i] * b[j + i];
    return detail::reduce8<T>(acc);
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
