// Products of small matrices (attention's per-(batch, head) products at the study shapes: 64 x 64 x 8,
// 24 x 24 x 32, ...) without BLAS: no packing, no per-call set-up, register blocks sized for one head.
// OpenBLAS spends more on those than on the arithmetic at these sizes; blas::gemm sends a product here when
// small_gemm_fits says so, and to OpenBLAS otherwise.
#pragma once

#include <cstddef>

namespace relpos::blas {

// True when (m, n, k) is a product this kernel does at least as fast as OpenBLAS (measured on the study
// shapes: bench/relpos_bench --only ruoss kazemnejad).
// Built without AVX2 (RELPOS_NATIVE=OFF on x86-64) the vectors fall back to SSE2, and OpenBLAS does them all.
inline bool small_gemm_fits(std::size_t m, std::size_t n, std::size_t k) {
#if defined(__AVX2__) || !defined(__x86_64__)
    return m * n * k <= std::size_t(64) * 64 * 64 && n <= 128 && k <= 256;
#else
    return false;
#endif
}

// C(m,n) = alpha * op(A) * op(B) + beta * C, row-major, as blas::gemm (beta == 0: C is not read). Each entry of
// C is one fused multiply-add chain over k in order, then alpha * sum + beta * C.
void small_gemm(bool trans_a, bool trans_b, std::size_t m, std::size_t n, std::size_t k, float alpha, const float* a,
                std::size_t lda, const float* b, std::size_t ldb, float beta, float* c, std::size_t ldc);
void small_gemm(bool trans_a, bool trans_b, std::size_t m, std::size_t n, std::size_t k, double alpha, const double* a,
                std::size_t lda, const double* b, std::size_t ldb, double beta, double* c, std::size_t ldc);

}  // namespace relpos::blas
