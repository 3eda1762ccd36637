// Reductions: sum and mean over axes, max along an axis.
#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "autodiff/ops.hpp"

namespace relpos {

namespace {

// Normalised, sorted, unique axes.
std::vector<std::size_t> norm_axes(const char* op, const std::vector<long>& axes, std::size_t nd) {
    std::vector<std::size_t> r;
    for (long a : axes) r.push_back(norm_axis(op, a, nd));
    std::sort(r.begin(), r.end());
    if (std::adjacent_find(r.begin(), r.end()) != r.end()) shape_fail(op, "an axis is repeated");
    return r;
}

// The input shape with reduced axes set to 1 (keepdims shape).
Shape keep_shape(const Shape& s, const std::vector<std::size_t>& axes) {
    Shape k = s;
    for (auto a : axes) k[a] = 1;
    return k;
}

template <class T>
Var<T> sum_scaled(const Var<T>& a, const std::vector<long>& axes_, bool keepdims, T scale, const char* name) {
    const Shape s = a.shape();
    const auto axes = norm_axes(name, axes_, s.size());
    const Shape ks = keep_shape(s, axes);
    // sum_to reduces exactly the axes where ks has 1 and s does not: the same machinery as broadcasting.
    Array<T> r = sum_to(a.value(), ks);
    if (scale != T(1))
        for (auto& v : r) v *= scale;
    Shape os;
    for (std::size_t i = 0; i < s.size(); ++i)
        if (keepdims || !std::binary_search(axes.begin(), axes.end(), i)) os.push_back(ks[i]);
    Array<T> out = uninit<T>(os);
    std::copy(r.begin(), r.end(), out.begin());
    return make_result<T>(
        std::move(out), {a},
        [s, ks, scale](Node<T>& self) {
            // Broadcast the (keepdims-shaped) gradient back over the reduced axes.
            auto& A = *self.parents[0];
            Array<T> g = uninit<T>(ks);
            std::copy(self.grad.begin(), self.grad.end(), g.begin());
            Array<T>& d = A.grad_buf();
            if (scale == T(1))
                d += xt::broadcast(g, s);
            else
                d += scale * xt::broadcast(g, s);
        },
        name);
}

}  // namespace

template <class T>
Var<T> sum(const Var<T>& a, const std::vector<long>& axes, bool keepdims) {
    return sum_scaled(a, axes, keepdims, T(1), "sum");
}

template <class T>
Var<T> sum(const Var<T>& a) {
    std::vector<long> axes(a.ndim());
    for (std::size_t i = 0; i < axes.size(); ++i) axes[i] = static_cast<long>(i);
    return sum(a, axes, false);
}

template <class T>
Var<T> mean(const Var<T>& a, const std::vector<long>& axes, bool keepdims) {
    const Shape s = a.shape();
    std::size_t count = 1;
    for (auto ax : norm_axes("mean", axes, s.size())) count *= s[ax];
    if (count == 0) shape_fail("mean", fmt::format("mean over an empty axis of {}", shape_str(s)));
    return sum_scaled(a, axes, keepdims, T(1) / T(count), "mean");
}

template <class T>
Var<T> mean(const Var<T>& a) {
    std::vector<long> axes(a.ndim());
    for (std::size_t i = 0; i < axes.size(); ++i) axes[i] = static_cast<long>(i);
    return mean(a, axes, false);
}

template <class T>
Var<T> max(const Var<T>& a, long axis_, bool keepdims) {
    const Shape s = a.shape();
    const std::size_t axis = norm_axis("max", axis_, s.size());
    const AxisSplit sp = split_axis(s, axis);
    if (sp.n == 0) shape_fail("max", fmt::format("max over an empty axis of {}", shape_str(s)));
    Shape os = s;
    if (keepdims)
        os[axis] = 1;
    else
        os.erase(os.begin() + axis);
    Array<T> out = uninit<T>(os);
    std::vector<std::size_t> arg(sp.outer * sp.inner);  // flat input index of each maximum
    const T* x = a.data();
    for (std::size_t o = 0; o < sp.outer; ++o)
        for (std::size_t i = 0; i < sp.inner; ++i) {
            std::size_t best = o * sp.n * sp.inner + i;
            for (std::size_t j = 1; j < sp.n; ++j) {
                const std::size_t idx = (o * sp.n + j) * sp.inner + i;
                if (x[idx] > x[best]) best = idx;
            }
            out.data()[o * sp.inner + i] = x[best];
            arg[o * sp.inner + i] = best;
        }
    return make_result<T>(
        std::move(out), {a},
        [arg = std::move(arg)](Node<T>& self) {
            T* d = grad_ptr(*self.parents[0]);
            const T* g = self.grad.data();
            for (std::size_t i = 0; i < arg.size(); ++i) d[arg[i]] += g[i];
        },
        "max");
}

#define RELPOS_INST(T)                                                      \
    template Var<T> sum(const Var<T>&);                                     \
    template Var<T> sum(const Var<T>&, const std::vector<long>&, bool);     \
    template Var<T> mean(const Var<T>&);                                    \
    template Var<T> mean(const Var<T>&, const std::vector<long>&, bool);    \
    template Var<T> max(const Var<T>&, long, bool);
RELPOS_INST(float)
RELPOS_INST(double)
#undef RELPOS_INST

}  // namespace relpos
