// Shape ops: reshape, permute/transpose, slice, concat. Outputs are fresh contiguous buffers.
#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "autodiff/ops.hpp"

namespace relpos {

template <class T>
Var<T> reshape(const Var<T>& a, const Shape& shape) {
    if (numel(shape) != a.numel())
        shape_fail("reshape", fmt::format("cannot reshape {} ({} elements) to {} ({} elements)",
                                          shape_str(a.shape()), a.numel(), shape_str(shape), numel(shape)));
    Array<T> out = uninit<T>(shape);
    std::copy(a.data(), a.data() + a.numel(), out.data());
    return make_result<T>(
        std::move(out), {a},
        [](Node<T>& self) {
            auto [d, acc] = grad_target(*self.parents[0]);
            const T* g = self.grad.data();
            if (acc)
                for (std::size_t i = 0, n = self.grad.size(); i < n; ++i) d[i] += g[i];
            else
                std::copy_n(g, self.grad.size(), d);
        },
        "reshape");
}

namespace {

// out[perm-order index] = in[...]: generic strided copy, out shape[i] = in shape[perm[i]].
// If accumulate, adds into `out` instead of assigning.
template <class T>
void permute_copy(const T* in, const Shape& in_shape, const std::vector<std::size_t>& perm, T* out,
                  bool accumulate_into) {
    const std::size_t nd = in_shape.size();
    if (nd == 0) {
        out[0] = accumulate_into ? out[0] + in[0] : in[0];
        return;
    }
    std::vector<std::size_t> in_stride(nd);
    {
        std::size_t s = 1;
        for (std::size_t i = nd; i-- > 0;) {
            in_stride[i] = s;
            s *= in_shape[i];
        }
    }
    Shape os(nd);
    std::vector<std::size_t> st(nd);  // input stride for each output axis
    for (std::size_t i = 0; i < nd; ++i) {
        os[i] = in_shape[perm[i]];
        st[i] = in_stride[perm[i]];
    }
    const std::size_t total = numel(os);
    if (total == 0) return;
    std::vector<std::size_t> idx(nd, 0);
    std::size_t off = 0;
    const std::size_t inner = os[nd - 1], ist = st[nd - 1];
    for (std::size_t e = 0; e < total; e += inner) {
        if (accumulate_into)
            for (std::size_t j = 0; j < inner; ++j) out[e + j] += in[off + j * ist];
        else
            for (std::size_t j = 0; j < inner; ++j) out[e + j] = in[off + j * ist];
        for (std::size_t i = nd - 1; i-- > 0;) {
            if (++idx[i] < os[i]) {
                off += st[i];
                break;
            }
            off -= st[i] * (os[i] - 1);
            idx[i] = 0;
        }
    }
}

}  // namespace

template <class T>
Var<T> permute(const Var<T>& a, const std::vector<std::size_t>& perm) {
    return permute_view(a, a.shape(), perm, {});
}

template <class T>
Var<T> permute_view(const Var<T>& a, const Shape& view, const std::vector<std::size_t>& perm, const Shape& out_shape) {
    if (numel(view) != a.numel())
        shape_fail("permute", fmt::format("cannot view {} ({} elements) as {} ({} elements)", shape_str(a.shape()),
                                          a.numel(), shape_str(view), numel(view)));
    const Shape s = view;
    {
        std::vector<std::size_t> sorted = perm;
        std::sort(sorted.begin(), sorted.end());
        bool ok = perm.size() == s.size();
        for (std::size_t i = 0; ok && i < sorted.size(); ++i) ok = sorted[i] == i;
        if (!ok) {
            std::string ps;
            for (auto v : perm) ps += (ps.empty() ? "" : ", ") + std::to_string(v);
            shape_fail("permute", fmt::format("({}) is not a permutation of the axes of {}", ps, shape_str(s)));
        }
    }
    Shape os(s.size());
    for (std::size_t i = 0; i < s.size(); ++i) os[i] = s[perm[i]];
    if (!out_shape.empty() && numel(out_shape) != numel(os))
        shape_fail("permute", fmt::format("cannot reshape the permuted {} ({} elements) to {} ({} elements)",
                                          shape_str(os), numel(os), shape_str(out_shape), numel(out_shape)));
    Array<T> out = uninit<T>(out_shape.empty() ? os : out_shape);
    permute_copy(a.data(), s, perm, out.data(), false);
    return make_result<T>(
        std::move(out), {a},
        [perm, os](Node<T>& self) {
            // Inverse permutation of the gradient (read as the permuted shape os, written in the input's
            // layout, which the view shares), accumulated into the input's gradient.
            std::vector<std::size_t> inv(perm.size());
            for (std::size_t i = 0; i < perm.size(); ++i) inv[perm[i]] = i;
            auto [d, acc] = grad_target(*self.parents[0]);
            permute_copy(self.grad.data(), os, inv, d, acc);
        },
        "permute");
}

template <class T>
Var<T> transpose(const Var<T>& a, long d0, long d1) {
    const std::size_t nd = a.ndim();
    const std::size_t i0 = norm_axis("transpose", d0, nd), i1 = norm_axis("transpose", d1, nd);
    std::vector<std::size_t> perm(nd);
    for (std::size_t i = 0; i < nd; ++i) perm[i] = i;
    std::swap(perm[i0], perm[i1]);
    return permute(a, perm);
}

template <class T>
Var<T> slice(const Var<T>& a, long axis_, std::size_t start, std::size_t end) {
    const Shape s = a.shape();
    const std::size_t axis = norm_axis("slice", axis_, s.size());
    if (start > end || end > s[axis])
        shape_fail("slice", fmt::format("range [{}, {}) is outside axis {} of size {} in {}", start, end, axis,
                                        s[axis], shape_str(s)));
    const AxisSplit sp = split_axis(s, axis);
    Shape os = s;
    os[axis] = end - start;
    Array<T> out = uninit<T>(os);
    const std::size_t len = (end - start) * sp.inner;
    for (std::size_t o = 0; o < sp.outer; ++o)
        std::copy_n(a.data() + (o * sp.n + start) * sp.inner, len, out.data() + o * len);
    return make_result<T>(
        std::move(out), {a},
        [sp, start, len](Node<T>& self) {
            T* d = grad_ptr(*self.parents[0]);
            const T* g = self.grad.data();
            for (std::size_t o = 0; o < sp.outer; ++o) {
                T* dst = d + (o * sp.n + start) * sp.inner;
                const T* src = g + o * len;
                for (std::size_t j = 0; j < len; ++j) dst[j] += src[j];
            }
        },
        "slice");
}

template <class T>
Var<T> concat(const std::vector<Var<T>>& xs, long axis_) {
    if (xs.empty()) shape_fail("concat", "needs at least one tensor");
    const Shape s0 = xs[0].shape();
    const std::size_t axis = norm_axis("concat", axis_, s0.size());
    Shape os = s0;
    os[axis] = 0;
    for (const auto& x : xs) {
        Shape sx = x.shape();
        bool ok = sx.size() == s0.size();
        for (std::size_t i = 0; ok && i < sx.size(); ++i) ok = i == axis || sx[i] == s0[i];
        if (!ok)
            shape_fail("concat", fmt::format("shapes {} and {} differ outside axis {}", shape_str(s0),
                                             shape_str(sx), axis));
        os[axis] += sx[axis];
    }
    const AxisSplit so = split_axis(os, axis);
    Array<T> out = uninit<T>(os);
    std::vector<std::size_t> offsets;  // start of each input along the axis
    std::size_t pos = 0;
    for (const auto& x : xs) {
        const std::size_t nx = x.shape()[axis];
        offsets.push_back(pos);
        const std::size_t len = nx * so.inner;
        for (std::size_t o = 0; o < so.outer; ++o)
            std::copy_n(x.data() + o * len, len, out.data() + (o * so.n + pos) * so.inner);
        pos += nx;
    }
    return make_result<T>(
        std::move(out), xs,
        [so, offsets, axis](Node<T>& self) {
            const T* g = self.grad.data();
            for (std::size_t t = 0; t < self.parents.size(); ++t) {
                auto& P = *self.parents[t];
                if (!P.requires_grad) continue;
                const std::size_t len = P.value.shape()[axis] * so.inner;
                T* d = grad_ptr(P);
                for (std::size_t o = 0; o < so.outer; ++o) {
                    const T* src = g + (o * so.n + offsets[t]) * so.inner;
                    T* dst = d + o * len;
                    for (std::size_t j = 0; j < len; ++j) dst[j] += src[j];
                }
            }
        },
        "concat");
}

#define RELPOS_INST(T)                                                               \
    template Var<T> reshape(const Var<T>&, const Shape&);                            \
    template Var<T> permute(const Var<T>&, const std::vector<std::size_t>&);         \
    template Var<T> permute_view(const Var<T>&, const Shape&, const std::vector<std::size_t>&, const Shape&); \
    template Var<T> transpose(const Var<T>&, long, long);                            \
    template Var<T> slice(const Var<T>&, long, std::size_t, std::size_t);            \
    template Var<T> concat(const std::vector<Var<T>>&, long);
RELPOS_INST(float)
RELPOS_INST(double)
#undef RELPOS_INST

}  // namespace relpos
