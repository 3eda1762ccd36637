// Position-wise feed-forward block: Linear(d, d_ff) -> ReLU -> dropout -> Linear(d_ff, d).
#pragma once

#include "nn/dropout.hpp"
#include "nn/linear.hpp"

namespace relpos::nn {

template <class T>
class FeedForward : public Module<T> {
public:
    FeedForward(std::size_t d_model, std::size_t d_ff, double dropout_p, Rng& init_rng, Rng& dropout_rng) {
        fc1 = this->register_module("fc1", std::make_shared<Linear<T>>(d_model, d_ff, true, init_rng));
        fc2 = this->register_module("fc2", std::make_shared<Linear<T>>(d_ff, d_model, true, init_rng));
        drop = this->register_module("dropout", std::make_shared<Dropout<T>>(dropout_p, dropout_rng));
    }
    // x (..., d_model) -> (..., d_model); fc1, ReLU and dropout are one fused op (the same numbers as
    // drop->forward(relu(fc1->forward(x)))).
    Var<T> forward(const Var<T>& x) const {
        return fc2->forward(linear_relu_dropout(x, fc1->weight, fc1->bias, drop->p(), drop->rng(), drop->training()));
    }

    std::shared_ptr<Linear<T>> fc1, fc2;
    std::shared_ptr<Dropout<T>> drop;
};

}  // namespace relpos::nn
