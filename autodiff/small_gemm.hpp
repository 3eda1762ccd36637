// Products of small or thin matrices without BLAS: attention's per-(batch, head) products at the study shapes
// (64 x 64 x 8, 24 x 24 x 32, ...; no packing, no per-call set-up, register blocks sized for one head) and the
// linear layers' products over thousands of tokens with d_model and d_ff of a few hundred (cache-blocked;
// only the small op(B) is copied, never the tall operand). OpenBLAS spends more on those than on the
// arithmetic; the attention core calls small_gemm when small_gemm_fits says so, and blas::gemm sends a product
// here when thin_gemm_fits says so, to OpenBLAS otherwise.
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

// True when (m, n, k) is a product of a linear layer at the study shapes that this kernel, cache-blocked, does
// faster than OpenBLAS (thousands of rows, d_model and d_ff of a few hundred): X W and G Wᵀ with their inner
// size and their columns at most 512 (any number of rows), and the weight gradient Xᵀ G over all the batch's
// tokens with the layer's sizes at most 512 (any number of tokens). Measured one product at a time at the
// study shapes' sizes (1.03-1.24x OpenBLAS's rate); the wider products of the translation models stay with
// OpenBLAS.
inline bool thin_gemm_fits(bool trans_a, bool trans_b, std::size_t m, std::size_t n, std::size_t k) {
#if defined(__AVX2__) || !defined(__x86_64__)
    (void)trans_b;
    return n <= 512 && (trans_a ? m : k) <= 512;
#else
    (void)trans_a, (void)trans_b, (void)m, (void)n, (void)k;
    return false;
#endif
}

// C(m,n) = alpha * op(A) * op(B) + beta * C, row-major, as blas::gemm (beta == 0: C is not read). Each entry of
// C's register blocks (6 or 8 rows by whole vector registers) is one fused multiply-add chain over k in order, then
// alpha * sum + beta * C, however the product is split into chunks; the last rows and columns are summed in the
// same order, fused where the compiler contracts them.
void small_gemm(bool trans_a, bool trans_b, std::size_t m, std::size_t n, std::size_t k, float alpha, const float* a,
                std::size_t lda, const float* b, std::size_t ldb, float beta, float* c, std::size_t ldc);
void small_gemm(bool trans_a, bool trans_b, std::size_t m, std::size_t n, std::size_t k, double alpha, const double* a,
                std::size_t lda, const double* b, std::size_t ldb, double beta, double* c, std::size_t ldc);

}  // namespace relpos::blas
