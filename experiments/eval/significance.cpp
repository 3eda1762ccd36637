#include "experiments/eval/significance.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <boost/math/distributions/students_t.hpp>

#include "autodiff/rng.hpp"

namespace relpos {

namespace {
double mean_bleu(const std::vector<std::vector<BleuStats>>& runs, const std::vector<std::size_t>* idx,
                 const BleuOptions& opt) {
    double m = 0;
    for (const auto& r : runs) {
        BleuStats sum;
        if (idx)
            for (std::size_t i : *idx) sum += r[i];
        else
            for (const auto& st : r) sum += st;
        m += bleu_from_stats(sum, opt).score;
    }
    return m / double(runs.size());
}
}  // namespace

BootstrapResult paired_bootstrap(const std::vector<std::vector<BleuStats>>& base,
                                 const std::vector<std::vector<BleuStats>>& sys, std::size_t resamples,
                                 std::uint64_t rng_seed, const BleuOptions& opt) {
    if (base.empty() || sys.empty()) throw std::invalid_argument("paired_bootstrap: a system has no runs");
    const std::size_t n = base.front().size();
    for (const auto* side : {&base, &sys})
        for (const auto& r : *side)
            if (r.size() != n) throw std::invalid_argument("paired_bootstrap: runs scored on different sentence counts");
    BootstrapResult res;
    res.seeds_baseline = base.size();
    res.seeds_system = sys.size();
    res.resamples = resamples;
    res.observed = mean_bleu(sys, nullptr, opt) - mean_bleu(base, nullptr, opt);
    if (resamples == 0 || n == 0) return res;
    Rng rng(rng_seed);
    std::vector<double> d(resamples);
    std::vector<std::size_t> idx(n);
    for (std::size_t b = 0; b < resamples; ++b) {
        for (auto& i : idx) i = static_cast<std::size_t>(rng.below(n));
        d[b] = mean_bleu(sys, &idx, opt) - mean_bleu(base, &idx, opt);
    }
    double mean = 0;
    for (double x : d) mean += x;
    mean /= double(resamples);
    std::size_t extreme = 0;
    for (double x : d) extreme += std::abs(x - mean) >= std::abs(res.observed);
    res.p_value = double(extreme + 1) / double(resamples + 1);
    std::vector<double> sorted = d;
    std::sort(sorted.begin(), sorted.end());
    auto pct = [&](double q) {
        const double pos = q * double(resamples - 1);
        const std::size_t lo = static_cast<std::size_t>(std::floor(pos));
        const std::size_t hi = std::min(lo + 1, resamples - 1);
        return sorted[lo] + (pos - double(lo)) * (sorted[hi] - sorted[lo]);
    };
    res.ci_low = pct(0.025);
    res.ci_high = pct(0.975);
    return res;
}

// Student's t from Boost.Math (students_t: the quantile by its own inversion of the incomplete beta
// function, accurate to a few ulps): no table, no hand-written special function to get wrong.
namespace {
using StudentT = boost::math::students_t_distribution<double>;
}  // namespace

double t_quantile(double q, std::size_t df) {
    if (df == 0 || !(q > 0) || !(q < 1)) throw std::invalid_argument("t_quantile: needs df >= 1 and 0 < q < 1");
    return boost::math::quantile(StudentT(double(df)), q);
}

double t_critical_95(std::size_t df) { return df == 0 ? 0 : t_quantile(0.975, df); }

double t_two_sided_p(double t, std::size_t df) {
    if (std::isnan(t)) return 1.0;
    if (df == 0) return 1.0;
    if (std::isinf(t)) return 0.0;
    // P(|T| >= |t|) = 2 P(T >= |t|): the upper tail by its complement, never 1 - cdf (which loses every digit
    // of a small p)
    return std::min(1.0, 2 * boost::math::cdf(boost::math::complement(StudentT(double(df)), std::abs(t))));
}

double t_for_two_sided_p(double p, std::size_t df) {
    if (df == 0 || !(p > 0) || p > 1) throw std::invalid_argument("t_for_two_sided_p: needs df >= 1 and 0 < p <= 1");
    if (p == 1) return 0;
    return boost::math::quantile(boost::math::complement(StudentT(double(df)), p / 2));
}

std::vector<double> holm_adjust(const std::vector<double>& p) {
    const std::size_t m = p.size();
    std::vector<std::size_t> order(m);
    for (std::size_t i = 0; i < m; ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return p[a] < p[b]; });
    std::vector<double> adj(m);
    double running = 0;
    for (std::size_t k = 0; k < m; ++k) {
        running = std::max(running, std::min(1.0, double(m - k) * p[order[k]]));
        adj[order[k]] = running;
    }
    return adj;
}

}  // namespace relpos
