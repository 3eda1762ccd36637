#include "experiments/eval/significance.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

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

double t_critical_95(std::size_t df) {
    // Two-sided 5% points of Student's t (df 1..30), then the large-df values.
    static const double t[] = {0,     12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                               2.201, 2.179,  2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080,
                               2.074, 2.069,  2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
    if (df == 0) return 0;
    if (df <= 30) return t[df];
    // Between tabulated points the smaller df's value: conservative.
    return df <= 40 ? 2.042 : df <= 60 ? 2.021 : df <= 120 ? 2.000 : 1.980;
}

namespace {
// Continued fraction of the incomplete beta function (the modified Lentz method), for x < (a+1)/(a+b+2).
double beta_fraction(double a, double b, double x) {
    const double tiny = 1e-300, eps = 1e-15;
    double c = 1, d = 1 - (a + b) * x / (a + 1);
    if (std::abs(d) < tiny) d = tiny;
    d = 1 / d;
    double h = d;
    for (int m = 1; m <= 500; ++m) {
        const double m2 = 2.0 * m;
        double aa = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
        d = 1 + aa * d;
        c = 1 + aa / c;
        if (std::abs(d) < tiny) d = tiny;
        if (std::abs(c) < tiny) c = tiny;
        d = 1 / d;
        h *= d * c;
        aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
        d = 1 + aa * d;
        c = 1 + aa / c;
        if (std::abs(d) < tiny) d = tiny;
        if (std::abs(c) < tiny) c = tiny;
        d = 1 / d;
        const double del = d * c;
        h *= del;
        if (std::abs(del - 1) < eps) break;
    }
    return h;
}

// I_x(a, b), the regularized incomplete beta function, 0 <= x <= 1.
double incomplete_beta(double a, double b, double x) {
    if (x <= 0) return 0;
    if (x >= 1) return 1;
    const double front = std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x));
    return x < (a + 1) / (a + b + 2) ? front * beta_fraction(a, b, x) / a : 1 - front * beta_fraction(b, a, 1 - x) / b;
}
}  // namespace

double t_two_sided_p(double t, std::size_t df) {
    if (df == 0 || !std::isfinite(t)) return std::isfinite(t) ? 1.0 : 0.0;
    const double v = double(df);
    return incomplete_beta(v / 2, 0.5, v / (v + t * t));
}

double t_for_two_sided_p(double p, std::size_t df) {
    if (df == 0 || !(p > 0) || p > 1) throw std::invalid_argument("t_for_two_sided_p: needs df >= 1 and 0 < p <= 1");
    double lo = 0, hi = 1;
    while (t_two_sided_p(hi, df) > p) hi *= 2;  // p falls as |t| grows
    for (int i = 0; i < 200 && hi - lo > 1e-9 * hi; ++i) {
        const double mid = 0.5 * (lo + hi);
        (t_two_sided_p(mid, df) > p ? lo : hi) = mid;
    }
    return 0.5 * (lo + hi);
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
