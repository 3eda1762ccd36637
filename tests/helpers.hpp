// Shared test helpers: random tensors and a Catch2-friendly gradcheck assertion.
#pragma once

#include <catch2/catch.hpp>

#include "autodiff/autodiff.hpp"

namespace relpos::test {

template <class T = double>
inline Array<T> randn(const Shape& s, std::uint64_t seed, double scale = 1.0) {
    Rng rng(seed);
    Array<T> a = uninit<T>(s);
    for (auto& v : a) v = T(rng.normal() * scale);
    return a;
}

template <class T = double>
inline Array<T> randu(const Shape& s, std::uint64_t seed, double lo, double hi) {
    Rng rng(seed);
    Array<T> a = uninit<T>(s);
    for (auto& v : a) v = T(rng.uniform(lo, hi));
    return a;
}

template <class T = double>
inline Var<T> leaf(const Shape& s, std::uint64_t seed, double scale = 1.0) {
    return Var<T>(randn<T>(s, seed, scale), true);
}

inline Var<double> leaf_from(Array<double> a) { return Var<double>(std::move(a), true); }

// REQUIREs that gradcheck passes, printing its report otherwise.
inline void require_gradcheck(const std::function<Var<double>()>& f, const std::vector<Var<double>>& leaves,
                              const GradcheckOptions& opt = {}) {
    auto gc = gradcheck(f, leaves, opt);
    INFO(gc.report);
    REQUIRE(gc.checked > 0);
    REQUIRE(gc.ok);
}

template <class T>
inline void require_close(const Array<T>& a, const Array<T>& b, double tol) {
    REQUIRE(shape_of(a) == shape_of(b));
    for (std::size_t i = 0; i < a.size(); ++i) {
        INFO("element " << i << ": " << a.data()[i] << " vs " << b.data()[i]);
        REQUIRE(std::abs(double(a.data()[i]) - double(b.data()[i])) <= tol * (1.0 + std::abs(double(b.data()[i]))));
    }
}

}  // namespace relpos::test
