// The small-product kernel (autodiff/small_gemm.cpp) against a product summed in long double: every
// transpose, alpha and beta, row and column counts that exercise each register block and its tails, strided
// operands, k = 0, and C left unread when beta is 0.
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
template <class T>
void check_small_gemm(double tol) {
    Rng rng(11);
    const std::size_t pad = 3;  // row strides larger than the rows
    for (auto [m, n, k] : {std::tuple<std::size_t, std::size_t, std::size_t>{64, 64, 8}, {64, 8, 64}, {24, 24, 32},
                           {24, 32, 24}, {17, 37, 5}, {9, 1, 3}, {1, 67, 2}, {8, 16, 0}, {13, 4, 33}, {3, 40, 1}}) {
        for (bool ta : {false, true})
            for (bool tb : {false, true})
                for (auto [alpha, beta] : {std::pair<double, double>{1, 0}, {1, 1}, {0.5, -2}}) {
                    const std::size_t lda = (ta ? m : k) + pad, ldb = (tb ? k : n) + pad, ldc = n + pad;
                    std::vector<T> A((ta ? k : m) * lda), B((tb ? n : k) * ldb), C(m * ldc);
                    for (auto& v : A) v = T(rng.normal());
                    for (auto& v : B) v = T(rng.normal());
                    for (auto& v : C) v = beta == 0 ? std::numeric_limits<T>::quiet_NaN() : T(rng.normal());
                    const std::vector<T> C0 = C;
                    blas::small_gemm(ta, tb, m, n, k, T(alpha), A.data(), lda, B.data(), ldb, T(beta), C.data(), ldc);
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
