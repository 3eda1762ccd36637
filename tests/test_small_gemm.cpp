// The small-product kernel (autodiff/small_gemm.cpp) against a product summed in long double: every
// transpose, alpha and beta, row and column counts that exercise each register block and its tails, its row
// chunks and its k chunks (the linear layers' thin products), strided operands, k = 0, and C left unread when
// beta is 0; blas::gemm likewise, on the shapes it sends to the kernel and on those it sends to OpenBLAS.
#include <cmath>
#include <limits>
#include <tuple>
#include <vector>

#include <catch2/catch.hpp>

#include "autodiff/blas.hpp"
#include "autodiff/rng.hpp"
#include "autodiff/small_gemm.hpp"

using namespace relpos;

namespace {
template <class T, bool ViaGemm = false>
void check_small_gemm(double tol) {
    Rng rng(11);
    const std::size_t pad = 3;  // row strides larger than the rows
    for (auto [m, n, k] : {std::tuple<std::size_t, std::size_t, std::size_t>{64, 64, 8}, {64, 8, 64}, {24, 24, 32},
                           {24, 32, 24}, {17, 37, 5}, {9, 1, 3}, {1, 67, 2}, {8, 16, 0}, {13, 4, 33}, {3, 40, 1},
                           // row chunks (float: 32 rows of k 64) and every panel width (61 = 32 + 16 + 8 + 4 + 1)
                           {100, 61, 64}, {70, 20, 40},
                           // k chunks of 256 with a tail (transposed A: a weight gradient over 777 tokens)
                           {20, 61, 777},
                           // heads of 8 (head_columns, inner8): rows in every block and tail, columns short of a
                           // register, a long k through gemm_nn
                           {41, 41, 8}, {15, 8, 70}, {7, 8, 600}, {3, 25, 8}, {300, 24, 8}}) {
        for (bool ta : {false, true})
            for (bool tb : {false, true})
                for (auto [alpha, beta] : {std::pair<double, double>{1, 0}, {1, 1}, {0.5, -2}}) {
                    const std::size_t lda = (ta ? m : k) + pad, ldb = (tb ? k : n) + pad, ldc = n + pad;
                    std::vector<T> A((ta ? k : m) * lda), B((tb ? n : k) * ldb), C(m * ldc);
                    for (auto& v : A) v = T(rng.normal());
                    for (auto& v : B) v = T(rng.normal());
                    for (auto& v : C) v = beta == 0 ? std::numeric_limits<T>::quiet_NaN() : T(rng.normal());
                    const std::vector<T> C0 = C;
                    if (ViaGemm)
                        blas::gemm(ta, tb, m, n, k, T(alpha), A.data(), lda, B.data(), ldb, T(beta), C.data(), ldc);
                    else
                        blas::small_gemm(ta, tb, m, n, k, T(alpha), A.data(), lda, B.data(), ldb, T(beta), C.data(),
                                         ldc);
                    for (std::size_t i = 0; i < m; ++i)
                        for (std::size_t j = 0; j < ldc; ++j) {
                            INFO("m=" << m << " n=" << n << " k=" << k << " ta=" << ta << " tb=" << tb << " alpha="
                                      << alpha << " beta=" << beta << " at (" << i << ", " << j << ")");
                            const T got = C[i * ldc + j];
                            if (j >= n) {  // the padding between rows is never written
                                REQUIRE(std::isnan(got) == std::isnan(C0[i * ldc + j]));
                                if (!std::isnan(got)) REQUIRE(got == C0[i * ldc + j]);
                                continue;
                            }
                            long double s = 0, mag = 0;
                            for (std::size_t p = 0; p < k; ++p) {
                                const long double a = ta ? A[p * lda + i] : A[i * lda + p];
                                const long double b = tb ? B[j * ldb + p] : B[p * ldb + j];
                                s += a * b;
                                mag += std::fabs(a * b);
                            }
                            long double want = alpha * s;
                            if (beta != 0) want += beta * (long double)C0[i * ldc + j];
                            const long double scale = std::fabs(alpha) * mag + (beta != 0 ? std::fabs(beta * C0[i * ldc + j]) : 0) + 1;
                            REQUIRE(std::isfinite(double(got)));
                            REQUIRE(double(std::fabs(got - want) / scale) < tol);
                        }
                }
    }
}
}  // namespace

TEST_CASE("blas/small_gemm_matches_a_long_double_product", "[blas]") {
    check_small_gemm<float>(1e-6);
    check_small_gemm<double>(1e-14);
}

TEST_CASE("blas/gemm_matches_a_long_double_product", "[blas]") {
    check_small_gemm<float, true>(1e-6);
    check_small_gemm<double, true>(1e-14);
}

// The k chunks, the row chunks and the register blocks change no sum: each entry is one fused multiply-add chain
// over k in order, then beta * C + alpha * sum fused, wherever the chunks fall and whether a row is summed in a
// block of 8 or alone (rows 16-19 of 20; columns 32-60 of 61 in the narrower vectors and singly).
TEST_CASE("blas/small_gemm_sums_each_entry_as_one_fused_chain_over_k", "[blas]") {
    Rng rng(5);
    for (auto [ta, tb, m, n, k] : {std::tuple<bool, bool, std::size_t, std::size_t, std::size_t>{true, false, 20, 61, 777},
                                   {true, false, 64, 192, 4096}, {false, false, 100, 61, 64}, {false, true, 70, 20, 300},
                                   {false, false, 3, 61, 7}, {true, true, 20, 61, 33},
                                   // heads of 8: k = 8 with columns short of a register, n = 8 with row tails
                                   {false, true, 41, 41, 8}, {false, false, 19, 24, 8}, {true, false, 15, 8, 70},
                                   {false, false, 15, 8, 70}}) {
        const std::size_t lda = ta ? m : k, ldb = tb ? k : n;
        std::vector<float> A((ta ? k : m) * lda), B((tb ? n : k) * ldb), C(m * n);
        for (auto& v : A) v = float(rng.normal());
        for (auto& v : B) v = float(rng.normal());
        for (auto& v : C) v = float(rng.normal());
        const std::vector<float> C0 = C;
        for (auto [alpha, beta] : {std::pair<float, float>{0.75f, -1.5f}, {1.f, 0.f}}) {
            C = C0;
            blas::small_gemm(ta, tb, m, n, k, alpha, A.data(), lda, B.data(), ldb, beta, C.data(), n);
            for (std::size_t i = 0; i < m; ++i)
                for (std::size_t j = 0; j < n; ++j) {
                    float s = 0;
                    for (std::size_t p = 0; p < k; ++p)
                        s = std::fma(ta ? A[p * lda + i] : A[i * lda + p], tb ? B[j * ldb + p] : B[p * ldb + j], s);
                    const float want = beta == 0.f ? alpha * s : std::fma(beta, C0[i * n + j], alpha * s);
                    INFO("ta=" << ta << " tb=" << tb << " (" << m << ", " << n << ", " << k << ") alpha=" << alpha
                               << " at (" << i << ", " << j << ")");
                    REQUIRE(C[i * n + j] == want);
                }
        }
    }
}
