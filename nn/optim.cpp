#include "nn/optim.hpp"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "autodiff/parallel.hpp"

namespace relpos::nn {

template <class T>
double grad_norm(const NamedParams<T>& params) {
    double s = 0;
    for (auto& [n, p] : params) {
        if (!p.has_grad()) continue;
        for (T g : p.grad()) s += double(g) * double(g);
    }
    return std::sqrt(s);
}

template <class T>
double clip_grad_norm(const NamedParams<T>& params, double max_norm) {
    const double norm = grad_norm(params);
    if (!std::isfinite(norm) || norm <= max_norm) return norm;
    const T scale = T(max_norm / (norm + 1e-6));
    for (auto& [n, p] : params) {
        if (!p.has_grad()) continue;
        auto& g = p.node()->grad;
        for (auto& v : g) v *= scale;
    }
    return norm;
}

template <class T>
void SGD<T>::step(double lr) {
    for (auto& [n, p] : params_) {
        if (!p.has_grad()) continue;
        T* w = p.value().data();
        const T* g = p.grad().data();
        for (std::size_t i = 0, e = p.numel(); i < e; ++i) w[i] -= T(lr) * g[i];
    }
}

template <class T>
void SGD<T>::zero_grad() {
    for (auto& [n, p] : params_) p.zero_grad();
}

template <class T>
Adam<T>::Adam(NamedParams<T> params, AdamOptions opt) : params_(std::move(params)), opt_(opt) {
    for (auto& [n, p] : params_) {
        m_.push_back(zeros<T>(p.shape()));
        v_.push_back(zeros<T>(p.shape()));
    }
}

template <class T>
void Adam<T>::step(double lr) {
    ++t_;
    const double bc1 = 1.0 - std::pow(opt_.beta1, double(t_));
    const double bc2 = 1.0 - std::pow(opt_.beta2, double(t_));
    const T b1 = T(opt_.beta1), b2 = T(opt_.beta2);
    const T step_size = T(lr / bc1);
    const T inv_sqrt_bc2 = T(1.0 / std::sqrt(bc2));
    const T eps = T(opt_.eps);
    const T decay = T(1.0 - lr * opt_.weight_decay);
    const bool decays = opt_.weight_decay > 0;
    for (std::size_t k = 0; k < params_.size(); ++k) {
        Var<T>& p = params_[k].second;
        if (!p.has_grad()) continue;
        T* const w = p.value().data();
        const T* const g = p.grad().data();
        T* const m = m_[k].data();
        T* const v = v_[k].data();
        // Local restrict pointers and the decay test outside the loop let the compiler vectorise it
        // (it was scalar: the captured pointers could alias, and sqrt kept its errno branch until this
        // file was built with -fno-math-errno, see CMakeLists.txt). The same expressions as before, so
        // the same contractions and bit-identical updates (v >= 0: sqrt never sets errno here).
        // One loop body, instantiated with and without the decay (a runtime test inside it stops the vectoriser).
        const auto update = [=](auto with_decay) {
            parallel::parallel_for(p.numel(), 1 << 15, [=](std::size_t i0, std::size_t i1) {
                T* __restrict wr = w;
                const T* __restrict gr = g;
                T* __restrict mr = m;
                T* __restrict vr = v;
                for (std::size_t i = i0; i < i1; ++i) {
                    mr[i] = b1 * mr[i] + (T(1) - b1) * gr[i];
                    vr[i] = b2 * vr[i] + (T(1) - b2) * gr[i] * gr[i];
                    if constexpr (decltype(with_decay)::value) wr[i] *= decay;
                    wr[i] -= step_size * mr[i] / (std::sqrt(vr[i]) * inv_sqrt_bc2 + eps);
                }
            });
        };
        if (decays)
            update(std::true_type{});
        else
            update(std::false_type{});
    }
}

template <class T>
void Adam<T>::zero_grad() {
    for (auto& [n, p] : params_) p.zero_grad();
}

double inverse_sqrt_lr(std::size_t step, std::size_t d_model, std::size_t warmup, double scale) {
    const double s = double(std::max<std::size_t>(step, 1));
    const double w = double(std::max<std::size_t>(warmup, 1));
    return scale / std::sqrt(double(d_model)) * std::min(1.0 / std::sqrt(s), s * std::pow(w, -1.5));
}

template double grad_norm(const NamedParams<float>&);
template double grad_norm(const NamedParams<double>&);
template double clip_grad_norm(const NamedParams<float>&, double);
template double clip_grad_norm(const NamedParams<double>&, double);
template class SGD<float>;
template class SGD<double>;
template class Adam<float>;
template class Adam<double>;

}  // namespace relpos::nn
