// Token embedding, optionally scaled by sqrt(d_model) (Vaswani et al. 3.4), and usable as the
// output projection when weights are shared (logits = x Eᵀ).
#pragma once

#include <cmath>

#include "nn/module.hpp"

namespace relpos::nn {

template <class T>
class Embedding : public Module<T> {
public:
    // Initialised N(0, d^-1/2), so that after the sqrt(d) scale the embeddings have unit variance
    // (the tensor2tensor / fairseq convention for scaled embeddings).
    Embedding(std::size_t vocab, std::size_t dim, bool scale, Rng& rng)
        : vocab_(vocab), dim_(dim), scale_(scale ? T(std::sqrt(double(dim))) : T(1)) {
        weight = this->register_parameter("weight", normal_init<T>({vocab, dim}, 1.0 / std::sqrt(double(dim)), rng));
    }
    // ids of shape ids_shape -> (ids_shape..., dim)
    Var<T> forward(const std::vector<std::int32_t>& ids, const Shape& ids_shape) const {
        Var<T> e = embedding(weight, ids, ids_shape);
        return scale_ == T(1) ? e : e * scale_;
    }
    // x (..., dim) -> logits (..., vocab) through the shared weight.
    Var<T> project(const Var<T>& x) const { return matmul(x, weight, false, true); }

    std::size_t vocab() const { return vocab_; }
    std::size_t dim() const { return dim_; }

    Var<T> weight;  // (vocab, dim)

private:
    std::size_t vocab_, dim_;
    T scale_;
};

}  // namespace relpos::nn
