#include "autodiff/blas.hpp"

#include <cblas.h>

extern "C" {
void openblas_set_num_threads(int);
int openblas_get_num_threads(void);
}

namespace relpos::blas {

namespace {
inline CBLAS_TRANSPOSE tr(bool t) { return t ? CblasTrans : CblasNoTrans; }
}  // namespace

void gemm(bool ta, bool tb, std::size_t m, std::size_t n, std::size_t k, float alpha, const float* a,
          std::size_t lda, const float* b, std::size_t ldb, float beta, float* c, std::size_t ldc) {
    if (m == 0 || n == 0) return;
    if (k == 0) {  // BLAS leaves C untouched for k == 0 only when beta == 1; be explicit
        for (std::size_t i = 0; i < m; ++i)
            for (std::size_t j = 0; j < n; ++j) c[i * ldc + j] = beta == 0.f ? 0.f : beta * c[i * ldc + j];
        return;
    }
    cblas_sgemm(CblasRowMajor, tr(ta), tr(tb), (int)m, (int)n, (int)k, alpha, a, (int)lda, b, (int)ldb,
                beta, c, (int)ldc);
}

void gemm(bool ta, bool tb, std::size_t m, std::size_t n, std::size_t k, double alpha, const double* a,
          std::size_t lda, const double* b, std::size_t ldb, double beta, double* c, std::size_t ldc) {
    if (m == 0 || n == 0) return;
    if (k == 0) {
        for (std::size_t i = 0; i < m; ++i)
            for (std::size_t j = 0; j < n; ++j) c[i * ldc + j] = beta == 0.0 ? 0.0 : beta * c[i * ldc + j];
        return;
    }
    cblas_dgemm(CblasRowMajor, tr(ta), tr(tb), (int)m, (int)n, (int)k, alpha, a, (int)lda, b, (int)ldb,
                beta, c, (int)ldc);
}

void set_num_threads(int n) { openblas_set_num_threads(n); }
int get_num_threads() { return openblas_get_num_threads(); }

}  // namespace relpos::blas
