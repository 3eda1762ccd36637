// Small products in registers (see small_gemm.hpp). Compiled with -ffp-contract=fast (CMakeLists.txt): the
// accumulation a * b + acc is one fused multiply-add, as in OpenBLAS's kernels.
#include "autodiff/small_gemm.hpp"

#include <cstring>
#include <vector>

namespace relpos::blas {

namespace {

template <class T, std::size_t Bytes>
struct VecOf {
    typedef T type __attribute__((vector_size(Bytes)));
};

// C[0..R) x [0..NV * lanes) of one register block: R rows of op(A) against NV vectors of B's columns; B is
// row-major (k, n) with row stride ldb. TA: A is stored (k, m), so row r of op(A) is column r of A.
template <class T, int R, int NV, std::size_t VB, bool TA>
inline void block(std::size_t k, const T* A, std::size_t lda, const T* B, std::size_t ldb, T alpha, T beta, T* C,
                  std::size_t ldc) {
    using V = typename VecOf<T, VB>::type;
    constexpr std::size_t L = VB / sizeof(T);
    V acc[R][NV];
    for (int r = 0; r < R; ++r)
        for (int v = 0; v < NV; ++v) acc[r][v] = V{};
    for (std::size_t p = 0; p < k; ++p) {
        V b[NV];
        for (int v = 0; v < NV; ++v) std::memcpy(&b[v], B + p * ldb + v * L, VB);
        for (int r = 0; r < R; ++r) {
            const T a = TA ? A[p * lda + r] : A[r * lda + p];
            for (int v = 0; v < NV; ++v) acc[r][v] += a * b[v];
        }
    }
    for (int r = 0; r < R; ++r)
        for (int v = 0; v < NV; ++v) {
            T* c = C + r * ldc + v * L;
            V out = alpha * acc[r][v];
            if (beta != T(0)) {
                V old;
                std::memcpy(&old, c, VB);
                out += beta * old;
            }
            std::memcpy(c, &out, VB);
        }
}

// All m rows of one column panel: blocks of R rows, then the remaining rows one at a time.
template <class T, int R, int NV, std::size_t VB, bool TA>
void panel(std::size_t m, std::size_t k, const T* A, std::size_t lda, const T* B, std::size_t ldb, T alpha, T beta,
           T* C, std::size_t ldc) {
    std::size_t i = 0;
    for (; i + R <= m; i += R)
        block<T, R, NV, VB, TA>(k, TA ? A + i : A + i * lda, lda, B, ldb, alpha, beta, C + i * ldc, ldc);
    for (; i < m; ++i) block<T, 1, NV, VB, TA>(k, TA ? A + i : A + i * lda, lda, B, ldb, alpha, beta, C + i * ldc, ldc);
}

// Column panels from the widest down: two 64-byte vectors (16 accumulators with R = 8), one, half a vector,
// a quarter, then single columns.
template <class T, bool TA>
void gemm_nn(std::size_t m, std::size_t n, std::size_t k, T alpha, const T* A, std::size_t lda, const T* B,
             std::size_t ldb, T beta, T* C, std::size_t ldc) {
    constexpr std::size_t L = 64 / sizeof(T);  // lanes of a 64-byte vector
    std::size_t j = 0;
    for (; j + 2 * L <= n; j += 2 * L) panel<T, 8, 2, 64, TA>(m, k, A, lda, B + j, ldb, alpha, beta, C + j, ldc);
    for (; j + L <= n; j += L) panel<T, 8, 1, 64, TA>(m, k, A, lda, B + j, ldb, alpha, beta, C + j, ldc);
    for (; j + L / 2 <= n; j += L / 2) panel<T, 8, 1, 32, TA>(m, k, A, lda, B + j, ldb, alpha, beta, C + j, ldc);
    for (; j + L / 4 <= n; j += L / 4) panel<T, 8, 1, 16, TA>(m, k, A, lda, B + j, ldb, alpha, beta, C + j, ldc);
    for (; j < n; ++j) panel<T, 8, 1, sizeof(T), TA>(m, k, A, lda, B + j, ldb, alpha, beta, C + j, ldc);
}

template <class T>
void small(bool ta, bool tb, std::size_t m, std::size_t n, std::size_t k, T alpha, const T* A, std::size_t lda,
           const T* B, std::size_t ldb, T beta, T* C, std::size_t ldc) {
    if (m == 0 || n == 0) return;
    thread_local std::vector<T> bt;  // op(B) = Bᵀ, (k, n), when B is read transposed
    if (tb) {
        bt.resize(k * n);
        for (std::size_t j = 0; j < n; ++j)
            for (std::size_t p = 0; p < k; ++p) bt[p * n + j] = B[j * ldb + p];
        B = bt.data();
        ldb = n;
    }
    if (ta)
        gemm_nn<T, true>(m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
    else
        gemm_nn<T, false>(m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
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
