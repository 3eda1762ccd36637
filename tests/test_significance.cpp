// Student's t (Boost.Math) as the report uses it: quantiles and two-sided p-values against published values
// and against the closed forms that exist for 1, 2 and 4 degrees of freedom (a second computation).
#include <cmath>

#include <catch2/catch.hpp>

#include "experiments/eval/significance.hpp"

using namespace relpos;

namespace {
const double kPi = std::acos(-1.0);

// Two-sided p of t in closed form: df 1 (Cauchy) 1 - (2/π) atan|t|; df 2 1 - |t|/√(2+t²), written as
// 2 / (√(2+t²) (√(2+t²) + |t|)) so that a small p keeps its digits; df 4 1 - (3/2) x (1 - t²/(12 (1 + t²/4)))
// with x = |t|/√(4+t²).
double p_df1(double t) { return 1 - 2 / kPi * std::atan(std::abs(t)); }
double p_df2(double t) {
    const double r = std::sqrt(2 + t * t);
    return 2 / (r * (r + std::abs(t)));
}
double p_df4(double t) {
    const double x = std::abs(t) / std::sqrt(4 + t * t);
    return 1 - 1.5 * x * (1 - t * t / (12 * (1 + t * t / 4)));
}
}  // namespace

TEST_CASE("significance/t quantiles match published values to double precision", "[significance]") {
    CHECK(t_quantile(0.975, 4) == Approx(2.7764451051977987).epsilon(1e-14));
    CHECK(t_critical_95(4) == Approx(2.7764451051977987).epsilon(1e-14));
    CHECK(t_critical_95(1) == Approx(std::tan(kPi * 0.475)).epsilon(1e-13));  // Cauchy: tan(π (q - 1/2)) = 12.7062...
    CHECK(t_critical_95(2) == Approx(std::sqrt(2 / (0.05 * 1.95) - 2)).epsilon(1e-13));  // df 2: t² = 2/(p(2-p)) - 2, p = 0.05
    CHECK(t_critical_95(30) == Approx(2.0422724563012373).epsilon(1e-13));
    // between the rows of a printed table (the old table gave the smaller df's 2.042 to every df in 31..40)
    CHECK(t_critical_95(35) == Approx(2.0301079282503425).epsilon(1e-12));
    CHECK(t_critical_95(1000000) == Approx(1.959966).margin(1e-5));  // the normal's 1.959964 as df grows
    CHECK(t_critical_95(0) == 0);
    CHECK(t_quantile(0.5, 7) == Approx(0.0).margin(1e-15));
    CHECK(t_quantile(0.025, 4) == Approx(-2.7764451051977987).epsilon(1e-14));  // symmetric
    CHECK_THROWS(t_quantile(1.0, 4));
    CHECK_THROWS(t_quantile(0.5, 0));
}

TEST_CASE("significance/two-sided p-values match published values and the closed forms", "[significance]") {
    CHECK(t_two_sided_p(2.0, 10) == Approx(0.07338803477074464).epsilon(1e-13));
    CHECK(t_two_sided_p(-2.0, 10) == Approx(0.07338803477074464).epsilon(1e-13));
    for (double t : {0.1, 0.5, 1.0, 2.5, 7.0, 40.0}) {
        INFO("t = " << t);
        CHECK(t_two_sided_p(t, 1) == Approx(p_df1(t)).epsilon(1e-12));
        CHECK(t_two_sided_p(t, 2) == Approx(p_df2(t)).epsilon(1e-12));
        CHECK(t_two_sided_p(t, 4) == Approx(p_df4(t)).epsilon(1e-10));
    }
    // a small p keeps its digits (a p of 1e-8 computed as 1 - cdf would keep about 8 of them)
    CHECK(t_two_sided_p(1e4, 2) == Approx(p_df2(1e4)).epsilon(1e-12));
    CHECK(t_two_sided_p(1e4, 2) < 1.1e-8);
    CHECK(t_two_sided_p(0.0, 3) == Approx(1.0));
    CHECK(t_two_sided_p(INFINITY, 3) == 0.0);
    CHECK(t_two_sided_p(NAN, 3) == 1.0);
    CHECK(t_two_sided_p(2.0, 0) == 1.0);
}

TEST_CASE("significance/the |t| of a two-sided p inverts the p-value", "[significance]") {
    CHECK(t_for_two_sided_p(0.05, 4) == Approx(2.7764451051977987).epsilon(1e-13));
    CHECK(t_for_two_sided_p(0.07338803477074464, 10) == Approx(2.0).epsilon(1e-12));
    for (double p : {0.5, 0.05, 0.05 / 36, 0.05 / 192, 1e-9})
        for (std::size_t df : {1, 2, 4, 30}) {
            INFO("p = " << p << ", df = " << df);
            CHECK(t_two_sided_p(t_for_two_sided_p(p, df), df) == Approx(p).epsilon(1e-10));
        }
    // Bonferroni's first step of a Holm family of 36 with 3 seeds (2 df): |t| = √(2/(p(2-p)) - 2), the
    // inverse of the df-2 closed form (p = 1 - t/√(2+t²))
    const double p = 0.05 / 36;
    CHECK(t_for_two_sided_p(p, 2) == Approx(std::sqrt(2 / (p * (2 - p)) - 2)).epsilon(1e-12));
    CHECK(t_for_two_sided_p(1.0, 3) == 0.0);
    CHECK_THROWS(t_for_two_sided_p(0.0, 3));
    CHECK_THROWS(t_for_two_sided_p(0.05, 0));
}
