// Gradient checker: analytic gradients from backward() against central differences, in double,
// one element at a time, for every input and parameter, through a random projection of the output
// (L = sum(y * r)). Tolerance as PyTorch's gradcheck: |a - n| <= atol + rtol * |n|.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "autodiff/var.hpp"

namespace relpos {

struct GradcheckOptions {
    double eps = 1e-6;
    double atol = 1e-5;
    double rtol = 1e-3;
    std::uint64_t seed = 1234;   // for the projection r
    std::size_t max_report = 5;  // mismatches listed in the report
};

struct GradcheckResult {
    bool ok = true;
    std::size_t checked = 0;     // elements compared
    std::size_t failures = 0;
    double max_abs_err = 0;
    std::string report;          // human-readable: which input, which element, analytic vs numeric
};

// `f` rebuilds the graph from the leaves (inputs and parameters) every time it is called and must
// be deterministic (reseed any dropout RNG inside f). Each leaf is perturbed in place.
// `names` (optional) label the leaves in the report.
GradcheckResult gradcheck(const std::function<Var<double>()>& f, const std::vector<Var<double>>& leaves,
                          const GradcheckOptions& opt = {}, const std::vector<std::string>& names = {});

// Moves every element of `a` at least `margin` away from each of `kinks` (e.g. ReLU's 0), so central
// differences never straddle a kink.
void move_away_from_kinks(Array<double>& a, const std::vector<double>& kinks, double margin = 1e-3);

}  // namespace relpos
