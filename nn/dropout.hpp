// Dropout module: inverted dropout from a shared, seeded RNG; identity in eval mode.
#pragma once

#include "nn/module.hpp"

namespace relpos::nn {

template <class T>
class Dropout : public Module<T> {
public:
    Dropout(double p, Rng& rng) : p_(p), rng_(&rng) {
        if (p < 0 || p >= 1) throw std::invalid_argument("dropout probability must be in [0, 1)");
    }
    Var<T> forward(const Var<T>& x) const { return dropout(x, p_, *rng_, this->training()); }
    double p() const { return p_; }
    Rng& rng() const { return *rng_; }  // for ops that fuse this dropout (linear_relu_dropout)

private:
    double p_;
    Rng* rng_;
};

}  // namespace relpos::nn
