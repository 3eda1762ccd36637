// Thin wrappers over CBLAS gemm on raw row-major buffers. Kept in their own translation unit so
// <cblas.h> never meets xtensor-blas (duplicate CBLAS enums).
#pragma once

#include <cstddef>
#include <string>

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
//  - OpenBLAS picks its kernels from the CPU model at load time; on a CPU it does not know (some
//    virtual machines) it falls back to an older family, the SSE3 "Prescott" kernels (~2x slower).
//    When OpenBLAS's family is of an older instruction-set tier than the CPU runs, set
//    OPENBLAS_CORETYPE to the newest family the CPU can run (better_core_type) and re-execute the
//    program once; never a family the CPU cannot run. An OPENBLAS_CORETYPE set in the environment is
//    left alone (`relpos run` prints core_type_notice() when it holds OpenBLAS to older kernels).
//  - glibc returns large freed blocks to the OS, so every step's activations would be page-faulted
//    in again; keep them in the heap instead (M_MMAP_THRESHOLD / M_TRIM_THRESHOLD), and in one arena
//    (M_ARENA_MAX 1: the other threads' arenas ignore the trim threshold and unmap their heaps).
void tune_process(char** argv);

// What the CPU (and the OS) can run, as far as the choice of OpenBLAS kernels goes.
struct CpuFeatures {
    bool avx2_fma = false;     // AVX2 and FMA3: the Haswell kernels
    bool avx512 = false;       // AVX-512 F, BW, DQ and VL: the SkylakeX kernels
    bool avx512_bf16 = false;  // and AVX512_BF16: the Cooperlake kernels (the same sgemm as SkylakeX)
};
CpuFeatures cpu_features();
// The kernel family tune_process switches OpenBLAS to when it chose `chosen` on a CPU with `cpu`, or
// nullptr to keep OpenBLAS's choice (also for a family name it does not know).
const char* better_core_type(const std::string& chosen, const CpuFeatures& cpu);
// The kernel family OpenBLAS uses ("SkylakeX", "Haswell", "Prescott", ...).
const char* core_name();
// A one-line note when OPENBLAS_CORETYPE, set in the environment, names an older kernel family than the
// CPU runs (relpos leaves a set OPENBLAS_CORETYPE alone); empty otherwise.
std::string core_type_notice();

// Threads for gemm and the other kernels: relpos's own pool (autodiff/parallel.hpp); OpenBLAS is
// kept single-threaded so the two never compete for cores.
void set_num_threads(int n);

}  // namespace relpos::blas
