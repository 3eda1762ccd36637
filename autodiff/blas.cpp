#include "autodiff/blas.hpp"
#include "autodiff/parallel.hpp"
#include "autodiff/small_gemm.hpp"

#include <cblas.h>
#include <malloc.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <string>

extern "C" {
void openblas_set_num_threads(int);
int openblas_get_num_threads(void);
char* openblas_get_corename(void);
}

namespace relpos::blas {

namespace {
inline CBLAS_TRANSPOSE tr(bool t) { return t ? CblasTrans : CblasNoTrans; }
}  // namespace

namespace {
void gemm1(bool ta, bool tb, std::size_t m, std::size_t n, std::size_t k, float alpha, const float* a,
           std::size_t lda, const float* b, std::size_t ldb, float beta, float* c, std::size_t ldc) {
    if (m == 0 || n == 0) return;
    if (k == 0) {  // BLAS leaves C untouched for k == 0 only when beta == 1; be explicit
        for (std::size_t i = 0; i < m; ++i)
            for (std::size_t j = 0; j < n; ++j) c[i * ldc + j] = beta == 0.f ? 0.f : beta * c[i * ldc + j];
        return;
    }
    if (thin_gemm_fits(ta, tb, m, n, k)) {
        small_gemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
        return;
    }
    cblas_sgemm(CblasRowMajor, tr(ta), tr(tb), (int)m, (int)n, (int)k, alpha, a, (int)lda, b, (int)ldb,
                beta, c, (int)ldc);
}

void gemm1(bool ta, bool tb, std::size_t m, std::size_t n, std::size_t k, double alpha, const double* a,
           std::size_t lda, const double* b, std::size_t ldb, double beta, double* c, std::size_t ldc) {
    if (m == 0 || n == 0) return;
    if (k == 0) {
        for (std::size_t i = 0; i < m; ++i)
            for (std::size_t j = 0; j < n; ++j) c[i * ldc + j] = beta == 0.0 ? 0.0 : beta * c[i * ldc + j];
        return;
    }
    if (thin_gemm_fits(ta, tb, m, n, k)) {
        small_gemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
        return;
    }
    cblas_dgemm(CblasRowMajor, tr(ta), tr(tb), (int)m, (int)n, (int)k, alpha, a, (int)lda, b, (int)ldb,
                beta, c, (int)ldc);
}

// Splits C into row blocks (or column blocks when C has few rows) across the pool; each block is
// one single-threaded gemm. Small products run whole on the calling thread.
template <class T>
void split_gemm(bool ta, bool tb, std::size_t m, std::size_t n, std::size_t k, T alpha, const T* a, std::size_t lda,
                const T* b, std::size_t ldb, T beta, T* c, std::size_t ldc) {
    constexpr double kMinFlopsPerThread = 4e6;  // below this a split costs more than it saves
    const double flops = 2.0 * double(m) * double(n) * double(k);
    if (parallel::num_threads() <= 1 || flops < 2 * kMinFlopsPerThread) {
        gemm1(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
        return;
    }
    if (m >= 64 || m >= n) {  // row blocks of C: rows of op(A)
        parallel::parallel_for(m, 32, [&](std::size_t r0, std::size_t r1) {
            const T* ap = ta ? a + r0 : a + r0 * lda;
            gemm1(ta, tb, r1 - r0, n, k, alpha, ap, lda, b, ldb, beta, c + r0 * ldc, ldc);
        });
    } else {  // column blocks of C: columns of op(B)
        parallel::parallel_for(n, 32, [&](std::size_t c0, std::size_t c1) {
            const T* bp = tb ? b + c0 * ldb : b + c0;
            gemm1(ta, tb, m, c1 - c0, k, alpha, a, lda, bp, ldb, beta, c + c0, ldc);
        });
    }
}
}  // namespace

void gemm(bool ta, bool tb, std::size_t m, std::size_t n, std::size_t k, float alpha, const float* a, std::size_t lda,
          const float* b, std::size_t ldb, float beta, float* c, std::size_t ldc) {
    split_gemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
void gemm(bool ta, bool tb, std::size_t m, std::size_t n, std::size_t k, double alpha, const double* a, std::size_t lda,
          const double* b, std::size_t ldb, double beta, double* c, std::size_t ldc) {
    split_gemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

const char* core_name() { return openblas_get_corename(); }

std::string core_type_notice() {
    const char* set = std::getenv("OPENBLAS_CORETYPE");
    if (!set || std::getenv("RELPOS_NO_REEXEC")) return {};  // relpos's own choice is no news
    const char* better = better_core_type(set, cpu_features());
    if (!better) return {};
    return std::string("note: OPENBLAS_CORETYPE=") + set + " in the environment holds OpenBLAS to older kernels than "
           "this CPU runs (" + better + "): training is slower (1.5x on an AMD EPYC Zen 5, docs/performance.md) and "
           "rounds differently; unset it unless you want these kernels";
}

namespace {
// Instruction-set tier of an OpenBLAS kernel family (openblas_get_corename(), any case): 0 SSE, 1 AVX,
// 2 AVX2 + FMA, 3 AVX-512; -1 for a name not listed (left alone).
int core_tier(std::string name) {
    for (auto& c : name) c = char(std::tolower(static_cast<unsigned char>(c)));
    static const char* const tiers[][12] = {
        {"prescott", "core2", "penryn", "dunnington", "nehalem", "atom", "opteron", "opteron_sse3", "barcelona",
         "bobcat", "nano", nullptr},
        {"sandybridge", "bulldozer", "piledriver", "steamroller", nullptr},
        {"haswell", "zen", "excavator", nullptr},
        {"skylakex", "cooperlake", "sapphirerapids", nullptr},
    };
    for (int t = 0; t < 4; ++t)
        for (const char* const* n = tiers[t]; *n; ++n)
            if (name == *n) return t;
    return -1;
}
}  // namespace

const char* better_core_type(const std::string& chosen, const CpuFeatures& cpu) {
    const int have = core_tier(chosen);
    if (have < 0) return nullptr;  // a family this table does not know: trust OpenBLAS
    if (cpu.avx512 && have < 3) return cpu.avx512_bf16 ? "Cooperlake" : "SkylakeX";
    if (cpu.avx2_fma && have < 2) return "Haswell";
    return nullptr;
}

CpuFeatures cpu_features() {
    __builtin_cpu_init();  // libgcc's answers include the OS's support for the AVX / AVX-512 state
    CpuFeatures f;
    f.avx2_fma = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    f.avx512 = f.avx2_fma && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
               __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
    f.avx512_bf16 = f.avx512 && __builtin_cpu_supports("avx512bf16");
    return f;
}

void tune_process(char** argv) {
    mallopt(M_MMAP_THRESHOLD, 1 << 30);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    // One arena: the trim threshold only holds for the main arena; a thread's own arena gives its freed
    // 64 MiB heaps back to the OS, so a run trained on a second thread (relpos run -j 2) page-faulted its
    // activations in again every step (measured: 29 million minor faults and 15% of its time in the
    // kernel, against 85 thousand on the main thread).
    mallopt(M_ARENA_MAX, 1);
    if (std::getenv("OPENBLAS_CORETYPE") || std::getenv("RELPOS_NO_REEXEC")) return;
    const char* want = better_core_type(openblas_get_corename(), cpu_features());
    if (!want || !argv || !argv[0]) return;
    setenv("OPENBLAS_CORETYPE", want, 1);
    setenv("RELPOS_NO_REEXEC", "1", 1);
    execv("/proc/self/exe", argv);  // returns only on failure: carry on with the kernels OpenBLAS chose
}

// OpenBLAS itself stays single-threaded; relpos's pool splits the work (see parallel.hpp).
void set_num_threads(int n) {
    openblas_set_num_threads(1);
    parallel::set_num_threads(n);
}

}  // namespace relpos::blas
