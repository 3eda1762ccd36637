// Statistics for comparing systems trained with several seeds and scored by corpus BLEU on one test set.
#pragma once

#include <cstdint>
#include <vector>

#include "experiments/eval/bleu.hpp"

namespace relpos {

// Paired bootstrap resampling over test sentences (Koehn 2004; sacreBLEU's --paired-bs), extended to
// several seeds per system: each resample draws N sentence indices with replacement, scores every seed
// of both systems on that same sample, and takes the difference of the seed means of corpus BLEU.
struct BootstrapResult {
    double observed = 0;           // mean over seeds of BLEU(system) minus mean over seeds of BLEU(baseline)
    double ci_low = 0, ci_high = 0; // 2.5th and 97.5th percentiles of the resampled differences
    double p_value = 1;            // two-sided, see paired_bootstrap
    std::size_t resamples = 0, seeds_system = 0, seeds_baseline = 0;
};

// base[s][i], sys[s][i]: the BLEU statistics of sentence i in the hypotheses of seed s; every inner vector
// has the same length. The p-value is that of sacreBLEU's paired bootstrap: the resampled differences
// are centred on their mean (the null hypothesis of no difference), and
//     p = (1 + #{resamples with |d_b - mean(d)| >= |observed|}) / (resamples + 1).
// Deterministic for a given rng_seed.
BootstrapResult paired_bootstrap(const std::vector<std::vector<BleuStats>>& base,
                                 const std::vector<std::vector<BleuStats>>& sys, std::size_t resamples,
                                 std::uint64_t rng_seed, const BleuOptions& opt);

// Student's t (Boost.Math's students_t), df >= 1 degrees of freedom.
// The q-quantile: P(T <= t_quantile(q, df)) = q, 0 < q < 1 (t_{0.975,4} = 2.7764451051977987).
double t_quantile(double q, std::size_t df);

// Two-sided 95% critical value, t_{0.975,df}: the half-width of a 95% interval in standard errors (0 for df 0).
double t_critical_95(std::size_t df);

// Two-sided p-value of the t statistic `t`: P(|T| >= |t|) (1 for df 0 or a NaN t, 0 for an infinite t).
double t_two_sided_p(double t, std::size_t df);

// The |t| whose two-sided p is p (0 < p <= 1): the inverse of t_two_sided_p. How large a paired t must be
// to hold at a given level (the smallest p of a Holm family of m must be below alpha / m).
double t_for_two_sided_p(double p, std::size_t df);

// Holm's step-down adjustment (Holm 1979) of a family of p-values, in their order: sorted ascending,
// p_(i) becomes max over j <= i of min(1, (m - j + 1) · p_(j)). A comparison survives the correction at
// level alpha when its adjusted p is < alpha; the family-wise error rate is then at most alpha.
std::vector<double> holm_adjust(const std::vector<double>& p);

}  // namespace relpos
