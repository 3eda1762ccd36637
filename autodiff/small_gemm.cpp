// Small products in registers (see small_gemm.hpp). Every accumulation a * b + acc is one fused multiply-add
// (fmadd below: the instruction itself where the CPU has it, never left to the compiler's contraction, which
// fused some register widths and not others), so a row of C comes out the same whether it is summed in a block
// of 8 rows or alone: a decoder's step equals its row of the whole sequence.
#include "autodiff/small_gemm.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <vector>

#if defined(__x86_64__) && defined(__FMA__)
#include <immintrin.h>
#endif

namespace relpos::blas {

namespace {

template <class T, std::size_t Bytes>
struct VecOf {
    typedef T type __attribute__((vector_size(Bytes)));
};

// a * b + acc, lane by lane, rounded once.
template <class T, std::size_t VB, class V>
inline V fmadd(T a, V b, V acc) {
#if defined(__x86_64__) && defined(__FMA__)
    constexpr bool f = sizeof(T) == 4;
#if defined(__AVX512F__)
    if constexpr (VB == 64) {
        if constexpr (f)
            return (V)_mm512_fmadd_ps(_mm512_set1_ps(float(a)), (__m512)b, (__m512)acc);
        else
            return (V)_mm512_fmadd_pd(_mm512_set1_pd(double(a)), (__m512d)b, (__m512d)acc);
    }
#endif
    if constexpr (VB == 32) {
        if constexpr (f)
            return (V)_mm256_fmadd_ps(_mm256_set1_ps(float(a)), (__m256)b, (__m256)acc);
        else
            return (V)_mm256_fmadd_pd(_mm256_set1_pd(double(a)), (__m256d)b, (__m256d)acc);
    }
    if constexpr (VB == 16) {
        if constexpr (f)
            return (V)_mm_fmadd_ps(_mm_set1_ps(float(a)), (__m128)b, (__m128)acc);
        else
            return (V)_mm_fmadd_pd(_mm_set1_pd(double(a)), (__m128d)b, (__m128d)acc);
    }
#endif
    V r;
    for (std::size_t i = 0; i < VB / sizeof(T); ++i) r[i] = std::fma(a, b[i], acc[i]);
    return r;
}

// The running sums of one register block over k: acc[r][v] += op(A)[r][p] * B[p][v-th vector], p in order.
template <class T, int R, int NV, std::size_t VB, bool TA, class V>
inline __attribute__((always_inline)) void sums(std::size_t k, const T* A, std::size_t lda, const T* B,
                                                std::size_t ldb, V (&acc)[R][NV]) {
    constexpr std::size_t L = VB / sizeof(T);
    V c[R][NV];
    for (int r = 0; r < R; ++r)
        for (int v = 0; v < NV; ++v) c[r][v] = acc[r][v];
    for (std::size_t p = 0; p < k; ++p) {
        V b[NV];
        for (int v = 0; v < NV; ++v) std::memcpy(&b[v], B + p * ldb + v * L, VB);
        for (int r = 0; r < R; ++r) {
            const T a = TA ? A[p * lda + r] : A[r * lda + p];
            for (int v = 0; v < NV; ++v) c[r][v] = fmadd<T, VB>(a, b[v], c[r][v]);
        }
    }
    for (int r = 0; r < R; ++r)
        for (int v = 0; v < NV; ++v) acc[r][v] = c[r][v];
}
// The same out of line, so that only the block's registers live in its loop: inlined into the block, GCC 12 kept
// too few registers for the accumulators and B's row, re-reading B from memory at every multiply-add (R loads of
// it a step where one does) or spilling accumulators, and the loop waited on the load ports, not the FMA units
// (docs/performance.md, "Register blocks on AVX2 machines").
template <class T, int R, int NV, std::size_t VB, bool TA, class V>
__attribute__((noinline)) void sums_apart(std::size_t k, const T* A, std::size_t lda, const T* B, std::size_t ldb,
                                          V (&acc)[R][NV]) {
    sums<T, R, NV, VB, TA>(k, A, lda, B, ldb, acc);
}

// C[0..R) x [0..NV * lanes) of one register block: R rows of op(A) against NV vectors of B's columns; B is
// row-major (k, n) with row stride ldb. TA: A is stored (k, m), so row r of op(A) is column r of A.
// Part (the products split over k, see gemm_nn): the running sums come from P (row stride ldp) when `resume`,
// and go back to P unscaled when not `last`; each sum is the same chain of fused multiply-adds over k in order
// however k is split (a float stored and loaded back is the same float).
template <class T, int R, int NV, std::size_t VB, bool TA>
inline void block(std::size_t k, const T* A, std::size_t lda, const T* B, std::size_t ldb, T alpha, T beta, T* C,
                  std::size_t ldc, T* P = nullptr, std::size_t ldp = 0, bool resume = false, bool last = true) {
    using V = typename VecOf<T, VB>::type;
    constexpr std::size_t L = VB / sizeof(T);
    V acc[R][NV];
    if (last && k >= 32)  // C's lines on their way while the sums run (a linear layer's product writes megabytes)
        for (int r = 0; r < R; ++r)
            for (std::size_t o = 0; o < NV * VB; o += 64) __builtin_prefetch(C + r * ldc + o / sizeof(T), 1);
    for (int r = 0; r < R; ++r)
        for (int v = 0; v < NV; ++v) {
            if (resume)
                std::memcpy(&acc[r][v], P + r * ldp + v * L, VB);
            else
                acc[r][v] = V{};
        }
    // apart: the blocks that need most of the registers, over a k long enough to pay for the call (attention's
    // sums are short: k = 8 at the Ruoss shape)
    if (R * NV >= 12 && k >= 32)
        sums_apart<T, R, NV, VB, TA>(k, A, lda, B, ldb, acc);
    else
        sums<T, R, NV, VB, TA>(k, A, lda, B, ldb, acc);
    if (!last) {
        for (int r = 0; r < R; ++r)
            for (int v = 0; v < NV; ++v) std::memcpy(P + r * ldp + v * L, &acc[r][v], VB);
        return;
    }
    for (int r = 0; r < R; ++r)
        for (int v = 0; v < NV; ++v) {
            T* c = C + r * ldc + v * L;
            V out = alpha * acc[r][v];
            if (beta != T(0)) {
                V old;
                std::memcpy(&old, c, VB);
                out = fmadd<T, VB>(beta, old, out);
            }
            std::memcpy(c, &out, VB);
        }
}

// The rows i..m-1 of one column panel, fewer than 8: blocks of 4, 2 and 1 (at most one each). A block's rows are
// independent chains of fused multiply-adds; a row alone is one chain, which waits on the multiply-add's latency
// at every step: attention's tiles of a few dozen rows spent much of their time in such tails when they were
// summed row by row. Out of line, so that the 8-row loop of the linear layers compiles as it did without it.
template <class T, int NV, std::size_t VB, bool TA>
__attribute__((noinline)) void tail_rows(std::size_t i, std::size_t m, std::size_t k, const T* A, std::size_t lda,
                                         const T* B, std::size_t ldb, T alpha, T beta, T* C, std::size_t ldc, T* P,
                                         std::size_t ldp, bool resume, bool last) {
    const auto rows = [&](auto r_) {
        constexpr int r = decltype(r_)::value;
        if (i + r > m) return;
        block<T, r, NV, VB, TA>(k, TA ? A + i : A + i * lda, lda, B, ldb, alpha, beta, C + i * ldc, ldc,
                                P ? P + i * ldp : nullptr, ldp, resume, last);
        i += r;
    };
    rows(std::integral_constant<int, 4>{});
    rows(std::integral_constant<int, 2>{});
    rows(std::integral_constant<int, 1>{});
}

// All m rows of one column panel: blocks of R rows (6 or 8), then the rest (tail_rows).
template <class T, int R, int NV, std::size_t VB, bool TA>
void panel(std::size_t m, std::size_t k, const T* A, std::size_t lda, const T* B, std::size_t ldb, T alpha, T beta,
           T* C, std::size_t ldc, T* P, std::size_t ldp, bool resume, bool last) {
    static_assert(R <= 8, "tail_rows sums at most 7 rows left by the blocks");
    std::size_t i = 0;
    for (; i + R <= m; i += R)
        block<T, R, NV, VB, TA>(k, TA ? A + i : A + i * lda, lda, B, ldb, alpha, beta, C + i * ldc, ldc,
                                P ? P + i * ldp : nullptr, ldp, resume, last);
    if (i < m) tail_rows<T, NV, VB, TA>(i, m, k, A, lda, B, ldb, alpha, beta, C, ldc, P, ldp, resume, last);
}

// The CPU's widest vector register: 64 bytes with AVX-512, else 32 (AVX2). A 64-byte vector on AVX2 is no
// register: its multiply-add ran lane by lane and a block's 16 accumulators of two registers each spilled
// (an update at the Ruoss shape took 7x as long on an AVX2 machine as on an AVX-512 one).
#if defined(__AVX512F__) || !defined(__x86_64__)
constexpr std::size_t kVec = 64;
#else
constexpr std::size_t kVec = 32;
#endif

// Rows of a register block of NV vector registers: its R x NV accumulators, the NV registers of B's row and the
// broadcast of A's entry must fit the CPU's vector registers (16 with AVX2, 32 with AVX-512). Eight rows of two
// 32-byte registers take 19 of AVX2's 16, and the spilled accumulators cost a load and a store at every step
// over k; six rows take 15 (the shape of the usual AVX2 sgemm kernels, 6 x 16 floats).
template <int NV>
constexpr int kRows = (kVec == 32 && NV == 2) ? 6 : 8;

// The column panels in the order every walk takes them, from the widest down: two vector registers (kRows<2>
// rows), one, then halves of one down to 16 bytes, then single columns. f(j, bytes) for the panel starting at
// column j, bytes a std::integral_constant: its width in bytes. The widths change which register holds an entry
// of C, never its sum (one fused multiply-add chain over k in order, whatever the CPU).
template <class T, std::size_t W = 2 * kVec, class F>
void for_each_panel(std::size_t n, std::size_t j, F&& f) {
    if constexpr (W >= 16) {
        constexpr std::size_t L = W / sizeof(T);
        for (; j + L <= n; j += L) f(j, std::integral_constant<std::size_t, W>{});
        for_each_panel<T, W / 2>(n, j, f);
    } else {
        for (; j < n; ++j) f(j, std::integral_constant<std::size_t, sizeof(T)>{});
    }
}
template <class T, class F>
void for_each_panel(std::size_t n, F&& f) {
    for_each_panel<T, 2 * kVec>(n, std::size_t(0), f);
}

// Columns nv..n-1 of C (fewer than one 16-byte vector) as one zero-padded 16-byte panel summed into scratch,
// then copied out with beta applied as a block applies it (beta * C + the scaled sum, one rounding). Out of line,
// like tail_rows.
template <class T, bool TA>
__attribute__((noinline)) void padded_columns(std::size_t m, std::size_t n, std::size_t nv, std::size_t k, T alpha,
                                              const T* A, std::size_t lda, const T* B, std::size_t ldb, T beta, T* C,
                                              std::size_t ldc, bool packed) {
    constexpr std::size_t L4 = 16 / sizeof(T);
    const std::size_t nt = n - nv;
    thread_local std::vector<T> bt, ct;
    bt.assign(k * L4, T(0));
    for (std::size_t p = 0; p < k; ++p)
        for (std::size_t c = 0; c < nt; ++c) bt[p * L4 + c] = packed ? B[(nv + c) * k + p] : B[p * ldb + nv + c];
    ct.resize(m * L4);
    panel<T, 8, 1, 16, TA>(m, k, A, lda, bt.data(), L4, alpha, T(0), ct.data(), L4, nullptr, 0, false, true);
    for (std::size_t i = 0; i < m; ++i)
        for (std::size_t c = 0; c < nt; ++c) {
            T& out = C[i * ldc + nv + c];
            out = beta != T(0) ? std::fma(beta, out, ct[i * L4 + c]) : ct[i * L4 + c];
        }
}

// Every column panel of C. Packed: B was copied by pack_panels, each panel's (k, width) block contiguous at
// offset j * k (rows of width floats), so that a panel's rows do not fall on a few L1 sets whatever n is.
template <class T, bool TA>
void panels(std::size_t m, std::size_t n, std::size_t k, T alpha, const T* A, std::size_t lda, const T* B,
            std::size_t ldb, T beta, T* C, std::size_t ldc, T* P, std::size_t ldp, bool resume, bool last,
            bool packed = false) {
    // The last columns that fill no 16-byte vector (attention's scores at an odd number of keys, a vocabulary of
    // 106) go to padded_columns: as single columns they were chains of scalar multiply-adds through memory. Not
    // with running sums in P, whose rows have no room for the padding.
    constexpr std::size_t L4 = 16 / sizeof(T);
    const std::size_t nv = P ? n : n / L4 * L4;
    for_each_panel<T>(nv, [&](std::size_t j, auto bytes) {
        constexpr std::size_t W = decltype(bytes)::value;
        constexpr int NV = W == 2 * kVec ? 2 : 1;            // vectors of the panel
        constexpr std::size_t VB = W == 2 * kVec ? kVec : W;  // bytes of each
        panel<T, kRows<NV>, NV, VB, TA>(m, k, A, lda, packed ? B + j * k : B + j, packed ? W / sizeof(T) : ldb, alpha,
                                        beta, C + j, ldc, P ? P + j : nullptr, ldp, resume, last);
    });
    if (nv < n) padded_columns<T, TA>(m, n, nv, k, alpha, A, lda, B, ldb, beta, C, ldc, packed);
}

// o[c * ldo + p] = b[p * ldb + c] for an 8 x 8 block of floats: eight rows in, eight columns out, in registers.
inline void transpose8x8(const float* b, std::size_t ldb, float* o, std::size_t ldo) {
#if defined(__x86_64__) && defined(__FMA__)
    __m256 r[8], t[8];
    for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(b + i * ldb);
    for (int i = 0; i < 8; i += 2) {
        t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
    }
    for (int i = 0; i < 8; i += 4)
        for (int h = 0; h < 2; ++h) {
            r[i + h] = _mm256_shuffle_ps(t[i + h], t[i + 2 + h], _MM_SHUFFLE(1, 0, 1, 0));
            r[i + 2 + h] = _mm256_shuffle_ps(t[i + h], t[i + 2 + h], _MM_SHUFFLE(3, 2, 3, 2));
        }
    // r[0], r[2], r[1], r[3] now hold columns 0, 1, 2, 3 of rows 0-3 in their low halves and columns 4-7 in their
    // high halves; r[4..7] likewise for rows 4-7
    const int col[4] = {0, 2, 1, 3};
    for (int q = 0; q < 4; ++q) {
        _mm256_storeu_ps(o + q * ldo, _mm256_permute2f128_ps(r[col[q]], r[4 + col[q]], 0x20));
        _mm256_storeu_ps(o + (q + 4) * ldo, _mm256_permute2f128_ps(r[col[q]], r[4 + col[q]], 0x31));
    }
#else
    for (int p = 0; p < 8; ++p)
        for (int c = 0; c < 8; ++c) o[c * ldo + p] = b[p * ldb + c];
#endif
}

// op(B) (k, n) copied panel by panel in the order `panels` walks them: the panel of width w starting at column
// j holds its k rows of w floats at out + j * k. TB: B is stored (n, k), and its 8 x 8 blocks are transposed in
// registers (attention's q kᵀ transposes a (L, 8) key tile at every call).
template <class T>
void pack_panels(bool tb, std::size_t n, std::size_t k, const T* B, std::size_t ldb, T* out) {
    for_each_panel<T>(n, [&](std::size_t j, auto bytes) {
        const std::size_t w = decltype(bytes)::value / sizeof(T);
        T* o = out + j * k;
        std::size_t p0 = 0;
        if constexpr (std::is_same_v<T, float>)
            if (tb && w % 8 == 0)
                for (; p0 + 8 <= k; p0 += 8)
                    for (std::size_t c = 0; c < w; c += 8) transpose8x8(B + (j + c) * ldb + p0, ldb, o + p0 * w + c, w);
        for (std::size_t p = p0; p < k; ++p)
            for (std::size_t c = 0; c < w; ++c) o[p * w + c] = tb ? B[(j + c) * ldb + p] : B[p * ldb + j + c];
    });
}

// Cache blocking for the products of the linear layers (thousands of rows, a few hundred columns):
//  - without TA, rows of A in chunks of about 8 KiB, so that each chunk is read from L1 by every column panel
//    (a column panel walks all its rows before the next starts);
//  - with TA and a long k (a weight gradient: Xᵀ G over all the batch's tokens), k in chunks of kKc, so that
//    the chunk of both operands stays in L2 across the register blocks; the running sums wait in P (m x n).
// Neither changes a single sum: each entry of C is one fused multiply-add chain over k in order.
constexpr std::size_t kRowChunkBytes = 8192;
constexpr std::size_t kKc = 256;

template <class T, bool TA>
void gemm_nn(bool tb, std::size_t m, std::size_t n, std::size_t k, T alpha, const T* A, std::size_t lda, const T* B,
             std::size_t ldb, T beta, T* C, std::size_t ldc) {
    thread_local std::vector<T> packed;  // op(B) (or a chunk of its rows) panel by panel, pack_panels
    if (!TA) {
        packed.resize(k * n);
        pack_panels(tb, n, k, B, ldb, packed.data());
        constexpr std::size_t rb = kRows<2>;  // whole blocks of the widest panels' rows
        const std::size_t mc = std::max(rb, kRowChunkBytes / (sizeof(T) * std::max<std::size_t>(k, 1)) / rb * rb);
        for (std::size_t i0 = 0; i0 < m; i0 += mc)
            panels<T, false>(std::min(mc, m - i0), n, k, alpha, A + i0 * lda, lda, packed.data(), n, beta, C + i0 * ldc,
                             ldc, nullptr, 0, false, true, true);
        return;
    }
    // TA (a weight gradient Xᵀ G over all the batch's tokens): each chunk of kKc rows of op(B) is copied panel by
    // panel, as above (transposed on the way when tb), so that a register block reads its panel's rows one after
    // the other instead of one line of each of G's rows (a stride of the layer's width: a page every few rows)
    const auto op_b_from = [&](std::size_t p0) { return tb ? B + p0 : B + p0 * ldb; };  // op(B) from its row p0
    if (k <= 2 * kKc) {
        packed.resize(k * n);
        pack_panels(tb, n, k, B, ldb, packed.data());
        panels<T, true>(m, n, k, alpha, A, lda, packed.data(), n, beta, C, ldc, nullptr, 0, false, true, true);
        return;
    }
    thread_local std::vector<T> part;
    part.resize(m * n);
    packed.resize(kKc * n);
    for (std::size_t p0 = 0; p0 < k; p0 += kKc) {
        const std::size_t kc = std::min(kKc, k - p0);
        pack_panels(tb, n, kc, op_b_from(p0), ldb, packed.data());
        panels<T, true>(m, n, kc, alpha, A + p0 * lda, lda, packed.data(), n, beta, C, ldc, part.data(), n, p0 > 0,
                        p0 + kc == k, true);
    }
}

// Attention's tile products at heads of eight floats (the Ruoss encoder's 8 heads of 8), in kernels shaped for
// them: one of each product's sizes is a single 32-byte register. Through gemm_nn they ran at about half the
// rate of its large blocks: B copied at every call where one panel reads it as well in place, and k = 8 sums
// behind the blocks' set-up. Each entry is still one fused multiply-add chain over k in order, from zero, then
// alpha * sum (skipped at alpha = 1, an exact product) and beta * C: the numbers of gemm_nn, bit for bit.
#if defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__)
constexpr bool kHeadKernels = true;

// The scaled sum into C: alpha * acc + beta * C, as block() writes it. Masked: the first `cols` lanes only.
template <bool Masked, bool Plain>
inline void put8(float* c, __m256 acc, float alpha, float beta, __m256i mask = _mm256_setzero_si256()) {
    if (Plain) {  // alpha 1, beta 0
        if (Masked)
            _mm256_maskstore_ps(c, mask, acc);
        else
            _mm256_storeu_ps(c, acc);
        return;
    }
    __m256 out = alpha == 1.f ? acc : _mm256_mul_ps(_mm256_set1_ps(alpha), acc);
    if (beta != 0.f) {
        const __m256 old = Masked ? _mm256_maskload_ps(c, mask) : _mm256_loadu_ps(c);
        out = _mm256_fmadd_ps(_mm256_set1_ps(beta), old, out);
    }
    if (Masked)
        _mm256_maskstore_ps(c, mask, out);
    else
        _mm256_storeu_ps(c, out);
}

// C (m x 8) = alpha * op(A) (m x k) * B (k x 8, row stride ldb) + beta * C: attention's weights times v and the
// gradients of q, k and v. R rows of C at a time, B's row loaded once per step over k and read where it is.
template <int R, bool TA>
inline __attribute__((always_inline)) void rows_x8(std::size_t k, const float* A, std::size_t lda, const float* B,
                                                   std::size_t ldb, float alpha, float beta, float* C, std::size_t ldc) {
    __m256 acc[R];
    for (int r = 0; r < R; ++r) acc[r] = _mm256_setzero_ps();
    for (std::size_t p = 0; p < k; ++p) {
        const __m256 b = _mm256_loadu_ps(B + p * ldb);
        for (int r = 0; r < R; ++r)
            acc[r] = _mm256_fmadd_ps(_mm256_set1_ps(TA ? A[p * lda + r] : A[r * lda + p]), b, acc[r]);
    }
    for (int r = 0; r < R; ++r) put8<false, false>(C + r * ldc, acc[r], alpha, beta);
}
template <bool TA>
__attribute__((noinline)) void head_columns(std::size_t m, std::size_t k, float alpha, const float* A, std::size_t lda,
                                            const float* B, std::size_t ldb, float beta, float* C, std::size_t ldc) {
    const auto at = [&](std::size_t i) { return TA ? A + i : A + i * lda; };
    std::size_t i = 0;
    for (; i + 8 <= m; i += 8) rows_x8<8, TA>(k, at(i), lda, B, ldb, alpha, beta, C + i * ldc, ldc);
    if (i + 4 <= m) rows_x8<4, TA>(k, at(i), lda, B, ldb, alpha, beta, C + i * ldc, ldc), i += 4;
    if (i + 2 <= m) rows_x8<2, TA>(k, at(i), lda, B, ldb, alpha, beta, C + i * ldc, ldc), i += 2;
    if (i < m) rows_x8<1, TA>(k, at(i), lda, B, ldb, alpha, beta, C + i * ldc, ldc);
}

// C (m x n) = alpha * A (m x 8) * op(B) (8 x n) + beta * C: the scores q kᵀ and their gradient g vᵀ. op(B) is
// copied once into eight rows of n rounded up to whole registers (transposed in registers when B is stored
// (n, 8), zeros past n); then R rows by NV registers of C at a time, the eight steps over k unrolled; the last
// columns short of a register are written through a mask.
template <int R, int NV, bool Masked, bool Plain>
inline __attribute__((always_inline)) void rows_k8(const float* A, std::size_t lda, const float* Bp, std::size_t ldp,
                                                   float alpha, float beta, float* C, std::size_t ldc, __m256i mask) {
    __m256 acc[R][NV];
    for (int r = 0; r < R; ++r)
        for (int v = 0; v < NV; ++v) acc[r][v] = _mm256_setzero_ps();
    for (int p = 0; p < 8; ++p) {
        __m256 b[NV];
        for (int v = 0; v < NV; ++v) b[v] = _mm256_loadu_ps(Bp + p * ldp + 8 * v);
        for (int r = 0; r < R; ++r) {
            const __m256 a = _mm256_set1_ps(A[r * lda + p]);
            for (int v = 0; v < NV; ++v) acc[r][v] = _mm256_fmadd_ps(a, b[v], acc[r][v]);
        }
    }
    for (int r = 0; r < R; ++r)
        for (int v = 0; v < NV; ++v) put8<Masked, Plain>(C + r * ldc + 8 * v, acc[r][v], alpha, beta, mask);
}
template <int R, int NV, bool Masked, bool Plain>
inline void column_k8(std::size_t m, const float* A, std::size_t lda, const float* Bp, std::size_t ldp, float alpha,
                      float beta, float* C, std::size_t ldc, __m256i mask = _mm256_setzero_si256()) {
    std::size_t i = 0;
    for (; i + R <= m; i += R) rows_k8<R, NV, Masked, Plain>(A + i * lda, lda, Bp, ldp, alpha, beta, C + i * ldc, ldc, mask);
    if constexpr (R > 4)
        if (i + 4 <= m) rows_k8<4, NV, Masked, Plain>(A + i * lda, lda, Bp, ldp, alpha, beta, C + i * ldc, ldc, mask), i += 4;
    if (i + 2 <= m) rows_k8<2, NV, Masked, Plain>(A + i * lda, lda, Bp, ldp, alpha, beta, C + i * ldc, ldc, mask), i += 2;
    if (i < m) rows_k8<1, NV, Masked, Plain>(A + i * lda, lda, Bp, ldp, alpha, beta, C + i * ldc, ldc, mask);
}
template <bool Plain>
void inner8_columns(std::size_t m, std::size_t n, std::size_t np, const float* A, std::size_t lda, const float* Bp,
                    float alpha, float beta, float* C, std::size_t ldc) {
    std::size_t j = 0;
    for (; j + 16 <= n; j += 16) column_k8<6, 2, false, Plain>(m, A, lda, Bp + j, np, alpha, beta, C + j, ldc);
    if (j + 8 <= n) column_k8<8, 1, false, Plain>(m, A, lda, Bp + j, np, alpha, beta, C + j, ldc), j += 8;
    if (j < n) {
        alignas(32) int lanes[8];
        for (int c = 0; c < 8; ++c) lanes[c] = j + c < n ? -1 : 0;
        column_k8<8, 1, true, Plain>(m, A, lda, Bp + j, np, alpha, beta, C + j, ldc,
                                     _mm256_load_si256(reinterpret_cast<const __m256i*>(lanes)));
    }
}
__attribute__((noinline)) void inner8(bool tb, std::size_t m, std::size_t n, float alpha, const float* A,
                                      std::size_t lda, const float* B, std::size_t ldb, float beta, float* C,
                                      std::size_t ldc) {
    const std::size_t np = (n + 7) / 8 * 8;
    thread_local std::vector<float> bp;
    bp.resize(8 * np);
    std::size_t j = 0;
    if (tb)
        for (; j + 8 <= n; j += 8) transpose8x8(B + j * ldb, ldb, bp.data() + j, np);
    for (std::size_t p = 0; p < 8; ++p)
        for (std::size_t c = j; c < np; ++c) bp[p * np + c] = c >= n ? 0.f : tb ? B[c * ldb + p] : B[p * ldb + c];
    if (alpha == 1.f && beta == 0.f)
        inner8_columns<true>(m, n, np, A, lda, bp.data(), alpha, beta, C, ldc);
    else
        inner8_columns<false>(m, n, np, A, lda, bp.data(), alpha, beta, C, ldc);
}
#else
constexpr bool kHeadKernels = false;
#endif

template <class T>
void small(bool ta, bool tb, std::size_t m, std::size_t n, std::size_t k, T alpha, const T* A, std::size_t lda,
           const T* B, std::size_t ldb, T beta, T* C, std::size_t ldc) {
    if (m == 0 || n == 0) return;
#if defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__)
    if constexpr (std::is_same_v<T, float>) {
        if (n == 8 && !tb && (!ta || k <= 2 * kKc)) {
            if (ta)
                head_columns<true>(m, k, alpha, A, lda, B, ldb, beta, C, ldc);
            else
                head_columns<false>(m, k, alpha, A, lda, B, ldb, beta, C, ldc);
            return;
        }
        if (k == 8 && !ta && kVec == 32 && m <= 256) {  // a tile's rows (a linear layer's stay with gemm_nn)
            inner8(tb, m, n, alpha, A, lda, B, ldb, beta, C, ldc);
            return;
        }
    }
#endif
    if (ta)
        gemm_nn<T, true>(tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
    else
        gemm_nn<T, false>(tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

}  // namespace

void small_gemm(bool ta, bool tb, std::size_t m, std::size_t n, std::size_t k, float alpha, const float* a,
                std::size_t lda, const float* b, std::size_t ldb, float beta, float* c, std::size_t ldc) {
    small(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
void small_gemm(bool ta, bool tb, std::size_t m, std::size_t n, std::size_t k, double alpha, const double* a,
                std::size_t lda, const double* b, std::size_t ldb, double beta, double* c, std::size_t ldc) {
    small(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

}  // namespace relpos::blas
