// The rotation that rotary encodings share (`rope`, `xpos`): each pair of query/key coordinates
// (x_2i, x_2i+1) at position m is rotated by the angle m θ_i (Su et al. 2021, RoFormer, eq. 34),
//
//   f(x, m)_2i   = x_2i cos(m θ_i) - x_2i+1 sin(m θ_i)
//   f(x, m)_2i+1 = x_2i sin(m θ_i) + x_2i+1 cos(m θ_i),     θ_i = base^(-2i/d),  i = 0 .. d/2 - 1
//
// optionally times a per-pair scale s_i(m) = exp(sign · m · rate_i) (xPos's ζ_i^(±m/γ): rate_i = log(ζ_i)/γ).
// With no (L, L) or per-pair tensors: f(x) = x ⊙ C + (x · R) ⊙ S, C, S (L, d) holding s_i(m) cos(m θ_i),
// s_i(m) sin(m θ_i) at both 2i and 2i+1 and R the signed pair swap ((x·R)_2i = -x_2i+1, (x·R)_2i+1 = x_2i),
// computed pair by pair in one op (rotate_pairs, autodiff/ops_rotary.cpp; until 2026-12 it was a (d, d) gemm,
// two broadcast multiplies and an add, with the same numbers). Cost per rotated tensor (B, H, L, d): one pass
// forward and one backward; L·d/2 sin/cos evaluations for the tables. Positions are read through the
// randomized-position map.
#pragma once

#include <cmath>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "nn/position.hpp"

namespace relpos::nn {

template <class T>
class Rotary {
public:
    // `who` names the encoding in the error for an odd head dimension.
    Rotary(double base, std::size_t head_dim, const char* who) : d_(head_dim) {
        if (d_ % 2 != 0)
            throw std::invalid_argument(fmt::format("{}: head dimension {} is odd; it rotates pairs of coordinates", who, d_));
        for (std::size_t i = 0; i < d_; i += 2) theta_.push_back(std::pow(base, -double(i) / double(d_)));
    }

    struct Tables {
        Var<T> cos, sin;  // (L, d) constants
    };
    // cos(m θ_i) s_i(m), sin(m θ_i) s_i(m) for the indices offset .. offset + L - 1, at positions
    // m = mapped(map, index), each repeated at 2i and 2i+1. Without `rate` (d/2 values) s = 1 and the
    // tables are the plain rotation's, bit for bit; with it s_i(m) = exp(sign · m · rate_i).
    Tables tables(std::size_t offset, std::size_t L, const std::shared_ptr<const PositionMap>& map,
                  const std::vector<double>* rate = nullptr, double sign = 1.0) const {
        return tables_at(offset, L, map, 1.0, theta_, rate, sign);
    }
    // The plain rotation's tables at the angles (m · position_scale) θ'_i, θ' = `theta` (d/2 values): RoPE's
    // scaling at evaluation (position interpolation, NTK-aware frequencies). With position_scale 1 and theta
    // θ they are tables()'s, bit for bit.
    Tables tables_scaled(std::size_t offset, std::size_t L, const std::shared_ptr<const PositionMap>& map,
                         double position_scale, const std::vector<double>& theta) const {
        return tables_at(offset, L, map, position_scale, theta, nullptr, 1.0);
    }
    // θ_i = base^(-2i/d), i = 0 .. d/2 - 1
    const std::vector<double>& theta() const { return theta_; }
    // x (B, H, L, d) -> f(x) (B, H, L, d)
    Var<T> rotate(const Var<T>& x, const Tables& t) const { return rotate_pairs(x, t.cos, t.sin); }

    std::size_t head_dim() const { return d_; }

private:
    Tables tables_at(std::size_t offset, std::size_t L, const std::shared_ptr<const PositionMap>& map,
                     double position_scale, const std::vector<double>& theta, const std::vector<double>* rate,
                     double sign) const {
        Array<T> c = uninit<T>({L, d_}), s = uninit<T>({L, d_});
        for (std::size_t p = 0; p < L; ++p) {
            const double m = double(mapped(map, offset + p)) * position_scale;
            for (std::size_t i = 0; i < d_; i += 2) {
                const double angle = m * theta[i / 2];  // m θ_i
                if (!rate) {
                    c(p, i) = c(p, i + 1) = T(std::cos(angle));
                    s(p, i) = s(p, i + 1) = T(std::sin(angle));
                } else {
                    const double scale = std::exp(sign * m * (*rate)[i / 2]);  // s_i(m)
                    c(p, i) = c(p, i + 1) = T(std::cos(angle) * scale);
                    s(p, i) = s(p, i + 1) = T(std::sin(angle) * scale);
                }
            }
        }
        return {Var<T>(std::move(c)), Var<T>(std::move(s))};
    }

    std::size_t d_;
    std::vector<double> theta_;  // θ_i = base^(-2i/d), i = 0 .. d/2 - 1
};

}  // namespace relpos::nn
