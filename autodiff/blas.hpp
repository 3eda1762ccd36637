// Thin wrappers over CBLAS gemm on raw row-major buffers. Kept in their own translation unit so
// <cblas.h> never meets xtensor-blas (duplicate CBLAS enums).
#pragma once

#include <cstddef>

namespace relpos::blas {

// C(m,n) = alpha * op(A) * op(B) + beta * C, all row-major. op(A) is (m,k), op(B) is (k,n).
// lda/ldb/ldc are the row strides of A, B and C as stored.
void gemm(bool trans_a, bool trans_b, std::size_t m, std::size_t n, std::size_t k, float alpha,
          const float* a, std::size_t lda, const float* b, std::size_t ldb, float beta, float* c,
          std::size_t ldc);
void gemm(bool trans_a, bool trans_b, std::size_t m, std::size_t n, std::size_t k, double alpha,
          const double* a, std::size_t lda, const double* b, std::size_t ldb, double beta, double* c,
          std::size_t ldc);

// Process set-up for speed, called first thing in main() of the relpos programs:
//  - OpenBLAS picks its kernels from the CPU model at load time; on CPUs it does not know (some
//    virtual machines) it falls back to the SSE3 "Prescott" kernels, ~2x slower. When that happens
//    and the CPU has AVX-512F (SkylakeX) or AVX2 + FMA (Haswell), set OPENBLAS_CORETYPE and
//    re-execute the program once; never a kernel family the CPU cannot run.
//  - glibc returns large freed blocks to the OS, so every step's activations would be page-faulted
//    in again; keep them in the heap instead (M_MMAP_THRESHOLD / M_TRIM_THRESHOLD), and in one arena
//    (M_ARENA_MAX 1: the other threads' arenas ignore the trim threshold and unmap their heaps).
void tune_process(char** argv);
// The kernel family OpenBLAS uses ("SkylakeX", "Haswell", "Prescott", ...).
const char* core_name();

// Threads for gemm and the other kernels: relpos's own pool (autodiff/parallel.hpp); OpenBLAS is
// kept single-threaded so the two never compete for cores.
void set_num_threads(int n);
int get_num_threads();

}  // namespace relpos::blas
