#include "autodiff/gradcheck.hpp"

#include <cmath>

#include <fmt/format.h>

#include "autodiff/rng.hpp"

namespace relpos {

GradcheckResult gradcheck(const std::function<Var<double>()>& f, const std::vector<Var<double>>& leaves,
                          const GradcheckOptions& opt, const std::vector<std::string>& names) {
    GradcheckResult res;
    for (const auto& l : leaves) {
        if (!l.requires_grad()) throw std::invalid_argument("gradcheck: every leaf must require a gradient");
    }
    // Analytic: one backward with seed r.
    Var<double> y = f();
    Rng rng(opt.seed);
    Array<double> r = uninit<double>(y.shape());
    for (auto& v : r) v = rng.uniform(-1.0, 1.0);
    auto project = [&](const Var<double>& out) {
        if (out.shape() != y.shape())
            throw std::logic_error("gradcheck: output shape changed between calls");
        double s = 0;
        const double* p = out.data();
        for (std::size_t i = 0; i < r.size(); ++i) s += p[i] * r.data()[i];
        return s;
    };
    for (auto l : leaves) l.zero_grad();
    y.backward(r);
    std::vector<Array<double>> analytic;
    for (const auto& l : leaves) analytic.push_back(l.has_grad() ? l.grad() : zeros<double>(l.shape()));

    for (std::size_t li = 0; li < leaves.size(); ++li) {
        Var<double> leaf = leaves[li];
        const std::string name = li < names.size() ? names[li] : fmt::format("input {}", li);
        double* x = leaf.value().data();
        for (std::size_t e = 0; e < leaf.numel(); ++e) {
            const double orig = x[e];
            x[e] = orig + opt.eps;
            const double lp = project(f());
            x[e] = orig - opt.eps;
            const double lm = project(f());
            x[e] = orig;
            const double num = (lp - lm) / (2 * opt.eps);
            const double ana = analytic[li].data()[e];
            const double err = std::abs(ana - num);
            ++res.checked;
            res.max_abs_err = std::max(res.max_abs_err, err);
            if (!(err <= opt.atol + opt.rtol * std::abs(num))) {  // also catches NaN
                ++res.failures;
                res.ok = false;
                if (res.failures <= opt.max_report)
                    res.report += fmt::format("{} element {}: analytic {:.8g}, numeric {:.8g}, |diff| {:.3g}\n",
                                              name, e, ana, num, err);
            }
        }
    }
    for (auto l : leaves) l.zero_grad();
    if (res.ok)
        res.report = fmt::format("gradcheck passed: {} elements, max |diff| {:.3g}", res.checked, res.max_abs_err);
    else
        res.report = fmt::format("gradcheck FAILED: {} of {} elements\n", res.failures, res.checked) + res.report;
    return res;
}

void move_away_from_kinks(Array<double>& a, const std::vector<double>& kinks, double margin) {
    for (auto& v : a)
        for (double k : kinks)
            if (std::abs(v - k) < margin) v = k + (v >= k ? margin : -margin) * 2;
}

}  // namespace relpos
