// Linear layer y = x W + b with W stored (in, out) so the forward product is a plain gemm over all
// leading rows of x.
#pragma once

#include "nn/module.hpp"

namespace relpos::nn {

template <class T>
class Linear : public Module<T> {
public:
    Linear(std::size_t in, std::size_t out, bool bias, Rng& rng) {
        weight = this->register_parameter("weight", xavier_uniform<T>({in, out}, in, out, rng));
        if (bias) this->bias = this->register_parameter("bias", zeros<T>({out}));
    }
    // x (..., in) -> (..., out)
    Var<T> forward(const Var<T>& x) const {
        return linear(x, weight, bias);
    }
    // forward(x) * scale as one fused op (the same numbers).
    Var<T> forward_scaled(const Var<T>& x, T scale) const { return linear_scaled(x, weight, bias, scale); }

    Var<T> weight;  // (in, out)
    Var<T> bias;    // (out,) or undefined
};

}  // namespace relpos::nn
