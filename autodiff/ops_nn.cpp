// Fused layer ops: embedding gather, inverted dropout, layer norm.
#include <cmath>
#include <cstring>
#include <tuple>
#include <type_traits>

#include <fmt/format.h>

#include "autodiff/dropout_kernel.hpp"
#include "autodiff/ops.hpp"
#include "autodiff/parallel.hpp"

namespace relpos {

template <class T>
Var<T> embedding(const Var<T>& weight, const std::vector<std::int32_t>& ids, const Shape& ids_shape) {
    const Shape ws = weight.shape();
    if (ws.size() != 2)
        shape_fail("embedding", fmt::format("weight must be (V, D), got {}", shape_str(ws)));
    if (numel(ids_shape) != ids.size())
        shape_fail("embedding", fmt::format("{} ids do not fill the ids shape {}", ids.size(), shape_str(ids_shape)));
    const std::size_t V = ws[0], D = ws[1];
    Shape os = ids_shape;
    os.push_back(D);
    Array<T> out = uninit<T>(os);  // (ids..., D)
    const T* w = weight.data();
    T* o = out.data();
    for (std::size_t i = 0; i < ids.size(); ++i) {
        const auto id = ids[i];
        if (id < 0 || static_cast<std::size_t>(id) >= V)
            throw std::out_of_range(fmt::format("embedding: id {} at position {} is outside the vocabulary [0, {})",
                                                id, i, V));
        std::copy_n(w + id * D, D, o + i * D);
    }
    return make_result<T>(
        std::move(out), {weight},
        [ids, D](Node<T>& self) {
            T* dw = grad_ptr(*self.parents[0]);
            const T* g = self.grad.data();
            for (std::size_t i = 0; i < ids.size(); ++i) {  // scatter-add
                T* row = dw + ids[i] * D;
                const T* gi = g + i * D;
                for (std::size_t j = 0; j < D; ++j) row[j] += gi[j];
            }
        },
        "embedding");
}

template <class T>
Var<T> dropout(const Var<T>& a, double p, Rng& rng, bool training) {
    if (p < 0 || p >= 1) throw std::invalid_argument(fmt::format("dropout: p must be in [0, 1), got {}", p));
    if (!training || p == 0) return a;
    const std::size_t n = a.numel();
    const T scale = detail::dropout_scale<T>(p);
    std::vector<std::uint8_t> keep(n);
    Array<T> out = uninit<T>(a.shape());
    detail::dropout_forward(a.data(), out.data(), n, p, rng, keep.data());
    return make_result<T>(
        std::move(out), {a},
        [keep = std::move(keep), scale](Node<T>& self) {
            auto [d, acc] = grad_target(*self.parents[0]);
            const T* g = self.grad.data();
            if (acc)
                for (std::size_t i = 0; i < keep.size(); ++i) d[i] += g[i] * (T(keep[i]) * scale);
            else
                for (std::size_t i = 0; i < keep.size(); ++i) d[i] = g[i] * (T(keep[i]) * scale);
        },
        "dropout");
}

namespace {
// Row statistics of layer norm for R rows at once. Each row's sums run over j in order, exactly as one
// row at a time, but R independent chains hide the add latency (the sums were latency-bound: the
// order of a float sum cannot change without changing its result).
template <class T, std::size_t R>
inline void ln_stats(const T* x, std::size_t D, double eps, T* mean, T* rstd) {
    T m[R] = {}, v[R] = {};
    for (std::size_t j = 0; j < D; ++j)
        for (std::size_t q = 0; q < R; ++q) m[q] += x[q * D + j];
    for (std::size_t q = 0; q < R; ++q) m[q] /= T(D);
    for (std::size_t j = 0; j < D; ++j)
        for (std::size_t q = 0; q < R; ++q) v[q] += (x[q * D + j] - m[q]) * (x[q * D + j] - m[q]);
    for (std::size_t q = 0; q < R; ++q) {
        v[q] /= T(D);
        mean[q] = m[q];
        rstd[q] = T(1) / std::sqrt(v[q] + T(eps));
    }
}

// mean(dxhat) and mean(dxhat * xhat) for R rows at once (dxhat = dy * gamma), each in row order.
template <class T, std::size_t R>
inline void ln_grad_means(const T* x, const T* dy, const T* g, std::size_t D, const T* mean, const T* rstd,
                          T* s1o, T* s2o) {
    T s1[R] = {}, s2[R] = {};
    for (std::size_t j = 0; j < D; ++j)
        for (std::size_t q = 0; q < R; ++q) {
            const T dxh = dy[q * D + j] * g[j];
            s1[q] += dxh;
            s2[q] += dxh * (x[q * D + j] - mean[q]) * rstd[q];
        }
    for (std::size_t q = 0; q < R; ++q) {
        s1o[q] = s1[q] / T(D);
        s2o[q] = s2[q] / T(D);
    }
}

// Rows [r0, r1) in groups of 4, then one by one: f(std::integral_constant<std::size_t, R>, first row).
template <class F>
inline void for_row_groups(std::size_t r0, std::size_t r1, F&& f) {
    std::size_t r = r0;
    for (; r + 4 <= r1; r += 4) f(std::integral_constant<std::size_t, 4>{}, r);
    for (; r < r1; ++r) f(std::integral_constant<std::size_t, 1>{}, r);
}
}  // namespace

template <class T>
Var<T> layer_norm(const Var<T>& x, const Var<T>& gamma, const Var<T>& beta, double eps) {
    const Shape s = x.shape();
    if (s.empty()) shape_fail("layer_norm", "input needs at least one dimension");
    const std::size_t D = s.back(), N = x.numel() / std::max<std::size_t>(D, 1);
    if (gamma.shape() != Shape{D} || beta.shape() != Shape{D})
        shape_fail("layer_norm", fmt::format("input {} needs gamma and beta of shape ({},), got {} and {}",
                                             shape_str(s), D, shape_str(gamma.shape()), shape_str(beta.shape())));
    Array<T> out = uninit<T>(s);
    std::vector<T> mean(N), rstd(N);  // per row, for backward
    const T* px = x.data();
    const T* pg = gamma.data();
    const T* pb = beta.data();
    T* py = out.data();
    parallel::parallel_for(N, 16, [&](std::size_t r0, std::size_t r1) {
        for_row_groups(r0, r1, [&](auto R, std::size_t r) { ln_stats<T, R>(px + r * D, D, eps, &mean[r], &rstd[r]); });
        for (std::size_t r = r0; r < r1; ++r) {
            const T* xr = px + r * D;
            const T m = mean[r], rs = rstd[r];
            T* yr = py + r * D;
            for (std::size_t j = 0; j < D; ++j) yr[j] = (xr[j] - m) * rs * pg[j] + pb[j];
        }
    });
    return make_result<T>(
        std::move(out), {x, gamma, beta},
        [mean = std::move(mean), rstd = std::move(rstd), N, D](Node<T>& self) {
            // xhat = (x - mean) * rstd;  y = xhat * gamma + beta
            // dx = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat)),  dxhat = dy * gamma
            auto& X = *self.parents[0];
            auto& G = *self.parents[1];
            auto& B = *self.parents[2];
            const T* px = X.value.data();
            const T* pg = G.value.data();
            const T* dy = self.grad.data();
            T* dx = nullptr;
            bool acc_x = true;
            if (X.requires_grad) std::tie(dx, acc_x) = grad_target(X);
            T* dg = G.requires_grad ? grad_ptr(G) : nullptr;
            T* db = B.requires_grad ? grad_ptr(B) : nullptr;
            // dgamma, dbeta: sums over rows, in row order (independent of the thread count)
            if (dg || db)
                for (std::size_t r = 0; r < N; ++r) {
                    const T* xr = px + r * D;
                    const T* gr = dy + r * D;
                    const T m = mean[r], rs = rstd[r];
                    for (std::size_t j = 0; j < D; ++j) {
                        if (dg) dg[j] += gr[j] * (xr[j] - m) * rs;
                        if (db) db[j] += gr[j];
                    }
                }
            if (!dx) return;
            parallel::parallel_for(N, 16, [&](std::size_t r0, std::size_t r1) {
                T s1s[4], s2s[4];
                for_row_groups(r0, r1, [&](auto R, std::size_t r) {
                    ln_grad_means<T, R>(px + r * D, dy + r * D, pg, D, &mean[r], &rstd[r], s1s, s2s);
                    for (std::size_t q = 0; q < R; ++q, ++r) {
                        const T* xr = px + r * D;
                        const T* gr = dy + r * D;
                        const T m = mean[r], rs = rstd[r], s1 = s1s[q], s2 = s2s[q];
                        T* dr = dx + r * D;
                        if (acc_x)
                            for (std::size_t j = 0; j < D; ++j)
                                dr[j] += rs * (gr[j] * pg[j] - s1 - (xr[j] - m) * rs * s2);
                        else
                            for (std::size_t j = 0; j < D; ++j)
                                dr[j] = rs * (gr[j] * pg[j] - s1 - (xr[j] - m) * rs * s2);
                    }
                });
            });
        },
        "layer_norm");
}

#define RELPOS_INST(T)                                                                           \
    template Var<T> embedding(const Var<T>&, const std::vector<std::int32_t>&, const Shape&);    \
    template Var<T> dropout(const Var<T>&, double, Rng&, bool);                                  \
    template Var<T> layer_norm(const Var<T>&, const Var<T>&, const Var<T>&, double);
RELPOS_INST(float)
RELPOS_INST(double)
#undef RELPOS_INST

}  // namespace relpos
