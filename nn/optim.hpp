// Optimisers (SGD, Adam) and the learning-rate schedule of Vaswani et al. (2017).
#pragma once

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "autodiff/autodiff.hpp"

namespace relpos::nn {

template <class T>
using NamedParams = std::vector<std::pair<std::string, Var<T>>>;

// Scales all gradients so their global L2 norm is at most max_norm; returns the norm before
// clipping (non-finite if any gradient is).
template <class T>
double clip_grad_norm(const NamedParams<T>& params, double max_norm);

// Global L2 norm of the gradients.
template <class T>
double grad_norm(const NamedParams<T>& params);

template <class T>
class SGD {
public:
    explicit SGD(NamedParams<T> params) : params_(std::move(params)) {}
    void step(double lr);
    void zero_grad();

private:
    NamedParams<T> params_;
};

struct AdamOptions {
    double beta1 = 0.9, beta2 = 0.98, eps = 1e-9;  // the paper's settings
    double weight_decay = 0.0;                     // decoupled (AdamW) when > 0
};

// Adam (Kingma & Ba) with bias correction. State (m, v per parameter, step count) is exposed for
// checkpoints under the parameter's name.
template <class T>
class Adam {
public:
    Adam(NamedParams<T> params, AdamOptions opt = {});
    void step(double lr);
    void zero_grad();

    std::size_t steps() const { return t_; }
    void set_steps(std::size_t t) { t_ = t; }
    const NamedParams<T>& params() const { return params_; }
    std::vector<Array<T>>& first_moments() { return m_; }
    std::vector<Array<T>>& second_moments() { return v_; }
    const AdamOptions& options() const { return opt_; }

private:
    NamedParams<T> params_;
    AdamOptions opt_;
    std::vector<Array<T>> m_, v_;
    std::size_t t_ = 0;
};

// lr(step) = scale * d_model^-0.5 * min(step^-0.5, step * warmup^-1.5)   (step counted from 1)
double inverse_sqrt_lr(std::size_t step, std::size_t d_model, std::size_t warmup, double scale = 1.0);

}  // namespace relpos::nn
