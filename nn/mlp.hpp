// A small multilayer perceptron (used by the demo and the engine's end-to-end training test).
#pragma once

#include "nn/linear.hpp"

namespace relpos::nn {

template <class T>
class MLP : public Module<T> {
public:
    MLP(std::size_t in, std::size_t hidden, std::size_t out, Rng& rng) {
        fc1 = this->register_module("fc1", std::make_shared<Linear<T>>(in, hidden, true, rng));
        fc2 = this->register_module("fc2", std::make_shared<Linear<T>>(hidden, out, true, rng));
    }
    Var<T> forward(const Var<T>& x) const { return fc2->forward(tanh(fc1->forward(x))); }
    std::shared_ptr<Linear<T>> fc1, fc2;
};

}  // namespace relpos::nn
