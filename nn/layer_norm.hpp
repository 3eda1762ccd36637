// LayerNorm over the last axis (one fused autodiff op).
#pragma once

#include "nn/module.hpp"

namespace relpos::nn {

template <class T>
class LayerNorm : public Module<T> {
public:
    explicit LayerNorm(std::size_t dim, double eps = 1e-5) : eps_(eps) {
        gamma = this->register_parameter("weight", full<T>({dim}, T(1)));
        beta = this->register_parameter("bias", zeros<T>({dim}));
    }
    Var<T> forward(const Var<T>& x) const { return layer_norm(x, gamma, beta, eps_); }

    Var<T> gamma, beta;  // (dim,)

private:
    double eps_;
};

}  // namespace relpos::nn
