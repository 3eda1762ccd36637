// softmax / log_softmax along an axis (optionally masked) and fused cross-entropy.
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include <fmt/format.h>
#include <xtensor/xbroadcast.hpp>

#include "autodiff/expf_libm.hpp"
#include "autodiff/ops.hpp"
#include "autodiff/parallel.hpp"
#include "autodiff/vec_math.hpp"

namespace relpos {

template <class T>
Array<T> mask_from_bool(const xt::xarray<bool>& blocked) {
    Array<T> m = uninit<T>(Shape(blocked.shape().begin(), blocked.shape().end()));
    const T ninf = -std::numeric_limits<T>::infinity();
    std::transform(blocked.begin(), blocked.end(), m.begin(), [ninf](bool b) { return b ? ninf : T(0); });
    return m;
}

namespace {

// The mask at the input's full shape (materialised once if it broadcasts).
template <class T>
Array<T> full_mask(const char* op, const Array<T>& mask, const Shape& s) {
    const Shape ms = shape_of(mask);
    if (ms == s) return mask;
    const Shape b = broadcast_shapes(op, s, ms);
    if (b != s)
        shape_fail(op, fmt::format("mask of shape {} does not broadcast to the input's shape {}", shape_str(ms),
                                   shape_str(s)));
    Array<T> r = xt::broadcast(mask, s);
    return r;
}

// Computes softmax (log=false) or log_softmax (log=true) of x (+ mask) along a split axis.
template <class T>
void softmax_forward(const T* x, const T* m, T* y, const AxisSplit& sp, bool log) {
    const T ninf = -std::numeric_limits<T>::infinity();
    for (std::size_t o = 0; o < sp.outer; ++o)
        for (std::size_t i = 0; i < sp.inner; ++i) {
            const std::size_t base = o * sp.n * sp.inner + i, st = sp.inner;
            T mx = ninf;
            for (std::size_t j = 0; j < sp.n; ++j) {
                const std::size_t idx = base + j * st;
                const T v = m ? x[idx] + m[idx] : x[idx];
                y[idx] = v;
                if (v > mx) mx = v;
            }
            if (mx == ninf) {  // every entry blocked
                for (std::size_t j = 0; j < sp.n; ++j) y[base + j * st] = log ? ninf : T(0);
                continue;
            }
            T s = 0;
            for (std::size_t j = 0; j < sp.n; ++j) {
                const std::size_t idx = base + j * st;
                const T e = std::exp(y[idx] - mx);
                s += e;
                if (!log) y[idx] = e;
            }
            if (log) {
                const T lse = mx + std::log(s);
                for (std::size_t j = 0; j < sp.n; ++j) y[base + j * st] -= lse;
            } else {
                const T inv = T(1) / s;
                for (std::size_t j = 0; j < sp.n; ++j) y[base + j * st] *= inv;
            }
        }
}

template <class T>
Var<T> softmax_impl(const Var<T>& a, long axis_, const Array<T>* mask, bool log) {
    const char* name = log ? "log_softmax" : "softmax";
    const Shape s = a.shape();
    const std::size_t axis = norm_axis(name, axis_, s.size());
    const AxisSplit sp = split_axis(s, axis);
    Array<T> fm;
    if (mask) fm = full_mask(name, *mask, s);
    Array<T> y = uninit<T>(s);
    softmax_forward(a.data(), mask ? fm.data() : static_cast<const T*>(nullptr), y.data(), sp, log);
    return make_result<T>(
        std::move(y), {a},
        [sp, log](Node<T>& self) {
            // softmax:     dx_j = y_j (g_j - sum_k g_k y_k)
            // log_softmax: dx_j = g_j - exp(y_j) sum_k g_k      (blocked entries: y = 0 / -inf -> 0)
            const T* y = self.value.data();
            const T* g = self.grad.data();
            auto [d, acc] = grad_target(*self.parents[0]);
            if (!acc) std::fill(d, d + self.grad.size(), T(0));  // blocked entries are skipped below
            for (std::size_t o = 0; o < sp.outer; ++o)
                for (std::size_t i = 0; i < sp.inner; ++i) {
                    const std::size_t base = o * sp.n * sp.inner + i, st = sp.inner;
                    T acc = 0;
                    if (log) {
                        for (std::size_t j = 0; j < sp.n; ++j) acc += g[base + j * st];
                        for (std::size_t j = 0; j < sp.n; ++j) {
                            const std::size_t idx = base + j * st;
                            if (std::isinf(y[idx])) continue;
                            d[idx] += g[idx] - std::exp(y[idx]) * acc;
                        }
                    } else {
                        for (std::size_t j = 0; j < sp.n; ++j) acc += g[base + j * st] * y[base + j * st];
                        for (std::size_t j = 0; j < sp.n; ++j) {
                            const std::size_t idx = base + j * st;
                            d[idx] += y[idx] * (g[idx] - acc);
                        }
                    }
                }
        },
        name);
}

}  // namespace

template <class T>
Var<T> softmax(const Var<T>& a, long axis, const Array<T>* mask) {
    return softmax_impl(a, axis, mask, false);
}

template <class T>
Var<T> log_softmax(const Var<T>& a, long axis, const Array<T>* mask) {
    return softmax_impl(a, axis, mask, true);
}

namespace {
// max over x[0, n), -inf when n = 0: 16 running maxima, then theirs. The same value as a max taken in
// order (a NaN is skipped either way, like std::max(mx, v); and +0 / -0 give the same exp(y - mx)).
template <class T>
T row_max(const T* x, std::size_t n) {
    constexpr std::size_t W = 16;
    T m[W];
    for (auto& v : m) v = -std::numeric_limits<T>::infinity();
    std::size_t j = 0;
    for (; j + W <= n; j += W)
        for (std::size_t w = 0; w < W; ++w) m[w] = x[j + w] > m[w] ? x[j + w] : m[w];
    T mx = -std::numeric_limits<T>::infinity();
    for (std::size_t w = 0; w < W; ++w) mx = m[w] > mx ? m[w] : mx;
    for (; j < n; ++j) mx = x[j] > mx ? x[j] : mx;
    return mx;
}

// Rows of the attention softmax taken side by side (latency hiding for their in-order sums).
constexpr std::size_t kRowGroup = 8;

// sum[k] = sum_j y[k * n + j] for k < rows (<= kRowGroup), each over j in order.
template <class T>
void row_group_sums(const T* y, std::size_t rows, std::size_t n, T* sum) {
    if (rows == kRowGroup) {
        T s[kRowGroup] = {};
        for (std::size_t j = 0; j < n; ++j)
            for (std::size_t k = 0; k < kRowGroup; ++k) s[k] += y[k * n + j];
        std::copy_n(s, kRowGroup, sum);
        return;
    }
    for (std::size_t k = 0; k < rows; ++k) {
        T s = 0;
        for (std::size_t j = 0; j < n; ++j) s += y[k * n + j];
        sum[k] = s;
    }
}

}  // namespace

template <class T>
Var<T> attention_softmax(const Var<T>& logits, const Array<T>* key_padding, const Array<T>* attn, bool causal,
                         std::size_t q_offset) {
    const Shape s = logits.shape();
    if (s.size() != 4) shape_fail("attention_softmax", fmt::format("logits must be (B, H, Lq, Lk), got {}", shape_str(s)));
    const std::size_t B = s[0], H = s[1], Lq = s[2], Lk = s[3];
    if (key_padding && shape_of(*key_padding) != Shape{B, Lk})
        shape_fail("attention_softmax", fmt::format("key padding mask must be (B={}, Lk={}), got {}", B, Lk,
                                                    shape_str(shape_of(*key_padding))));
    if (attn && shape_of(*attn) != Shape{Lq, Lk})
        shape_fail("attention_softmax", fmt::format("attention mask must be (Lq={}, Lk={}), got {}", Lq, Lk,
                                                    shape_str(shape_of(*attn))));
    Array<T> y = uninit<T>(s);
    const T* x = logits.data();
    T* py = y.data();
    const T ninf = -std::numeric_limits<T>::infinity();
    const bool vector_exp = std::is_same_v<T, float> && vec::use_vector_expf();
    parallel::parallel_for(B * H * Lq, 64, [&](std::size_t r0, std::size_t r1) {
        std::vector<T> shifted(vector_exp ? Lk : 0);
        bool blocked[kRowGroup];
        for (std::size_t g0 = r0; g0 < r1; g0 += kRowGroup) {
            const std::size_t gn = std::min(kRowGroup, r1 - g0);
            for (std::size_t k = 0; k < gn; ++k) {
                const std::size_t row = g0 + k;
                const std::size_t b = row / (H * Lq), i = row % Lq;
                const T* xr = x + row * Lk;
                T* yr = py + row * Lk;
                // keys beyond the causal horizon get weight 0 and are never read
                const std::size_t n = causal ? std::min(Lk, q_offset + i + 1) : Lk;
                const T* kp = key_padding ? key_padding->data() + b * Lk : nullptr;
                const T* am = attn ? attn->data() + i * Lk : nullptr;
                // masked logits, then their maximum (a max is exact in any order: it runs over 16 lanes)
                if (kp && am)
                    for (std::size_t j = 0; j < n; ++j) yr[j] = xr[j] + kp[j] + am[j];
                else if (kp)
                    for (std::size_t j = 0; j < n; ++j) yr[j] = xr[j] + kp[j];
                else if (am)
                    for (std::size_t j = 0; j < n; ++j) yr[j] = xr[j] + am[j];
                else
                    std::copy_n(xr, n, yr);
                const T mx = row_max(yr, n);
                blocked[k] = mx == ninf;
                if (blocked[k]) {  // fully blocked row
                    std::fill(yr, yr + Lk, T(0));
                    continue;
                }
                if constexpr (std::is_same_v<T, float>) {
                    if (vector_exp) {  // the same exps as std::exp, vectorised (autodiff/expf_libm.hpp)
                        for (std::size_t j = 0; j < n; ++j) shifted[j] = yr[j] - mx;
                        vec::expf_libm(shifted.data(), yr, n);
                    } else {
                        for (std::size_t j = 0; j < n; ++j) yr[j] = std::exp(yr[j] - mx);
                    }
                } else {
                    for (std::size_t j = 0; j < n; ++j) yr[j] = std::exp(yr[j] - mx);
                }
                std::fill(yr + n, yr + Lk, T(0));
            }
            // Each row's sum runs over j in order, as one row at a time; the group's rows side by side
            // hide the add latency. Summing the zeros past a causal horizon changes nothing (s + 0 = s
            // for the sum s >= +0 of exps).
            T sum[kRowGroup];
            row_group_sums(py + g0 * Lk, gn, Lk, sum);
            for (std::size_t k = 0; k < gn; ++k) {
                if (blocked[k]) continue;
                T* yr = py + (g0 + k) * Lk;
                const T inv = T(1) / sum[k];
                for (std::size_t j = 0; j < Lk; ++j) yr[j] *= inv;  // zeros stay zeros
            }
        }
    });
    const std::size_t rows = B * H * Lq;
    return make_result<T>(
        std::move(y), {logits},
        [rows, Lk](Node<T>& self) {
            // dx_j = y_j (g_j - sum_k g_k y_k); blocked entries have y = 0 and get 0
            const T* y = self.value.data();
            const T* g = self.grad.data();
            auto [d, acc] = grad_target(*self.parents[0]);
            // One row at a time, as first written: the compiler vectorises the products of the dot
            // product (then added in order) and fuses the remainder into FMAs, and changing the loop
            // would change those roundings (kept bit-identical for the campaign's runs).
            parallel::parallel_for(rows, 64, [&, d = d, acc = acc](std::size_t r0, std::size_t r1) {
                for (std::size_t r = r0; r < r1; ++r) {
                    const T* yr = y + r * Lk;
                    const T* gr = g + r * Lk;
                    T* dr = d + r * Lk;
                    T dot = 0;
                    for (std::size_t j = 0; j < Lk; ++j) dot += gr[j] * yr[j];
                    if (acc)
                        for (std::size_t j = 0; j < Lk; ++j) dr[j] += yr[j] * (gr[j] - dot);
                    else
                        for (std::size_t j = 0; j < Lk; ++j) dr[j] = yr[j] * (gr[j] - dot);
                }
            });
        },
        "attention_softmax");
}

template <class T>
Var<T> cross_entropy(const Var<T>& logits, const std::vector<std::int32_t>& targets, const CrossEntropyOptions& opt) {
    const Shape s = logits.shape();
    if (s.empty()) shape_fail("cross_entropy", "logits need at least one dimension (..., V)");
    const std::size_t V = s.back();
    const std::size_t N = logits.numel() / std::max<std::size_t>(V, 1);
    if (targets.size() != N)
        shape_fail("cross_entropy", fmt::format("logits {} hold {} rows but {} targets were given", shape_str(s), N,
                                                targets.size()));
    if (opt.label_smoothing < 0 || opt.label_smoothing >= 1)
        throw std::invalid_argument(
            fmt::format("cross_entropy: label smoothing must be in [0, 1), got {}", opt.label_smoothing));
    const T eps = T(opt.label_smoothing);
    const T on = T(1) - eps, off = eps / T(V);
    // Only the log-sum-exp of each row is kept for the backward pass, which recomputes
    // softmax(x) from the logits (still held by the parent node): no (N, V) probability tensor is
    // written and read back, and the exps run vectorised (autodiff/vec_math.hpp).
    const T* x = logits.data();
    for (std::size_t r = 0; r < N; ++r)
        if (targets[r] != opt.ignore_index && (targets[r] < 0 || static_cast<std::size_t>(targets[r]) >= V))
            throw std::out_of_range(fmt::format("cross_entropy: target {} at row {} is outside [0, {})", targets[r], r, V));
    std::vector<double> row_loss(N, 0.0);  // summed in order below: the total does not depend on the split
    std::vector<T> lse(N, T(0));
    parallel::parallel_for(N, 8, [&](std::size_t r0, std::size_t r1) {
        for (std::size_t r = r0; r < r1; ++r) {
            const int t = targets[r];
            if (t == opt.ignore_index) continue;
            const T* xr = x + r * V;
            const T mx = vec::row_max(xr, V);
            T se, sx;
            vec::row_sum_exp(xr, V, mx, se, sx);
            lse[r] = mx + std::log(se);
            // -sum_j q_j log p_j with q = on * onehot(t) + off: log p_j = x_j - lse
            row_loss[r] = double(on) * double(lse[r] - xr[t]) + double(off) * (double(V) * double(lse[r]) - double(sx));
        }
    });
    double loss = 0;
    std::size_t count = 0;
    for (std::size_t r = 0; r < N; ++r)
        if (targets[r] != opt.ignore_index) {
            loss += row_loss[r];
            ++count;
        }
    if (opt.mean && opt.mean_over) count = opt.mean_over;
    const T scale = opt.mean ? (count ? T(1) / T(count) : T(0)) : T(1);
    Array<T> out = Array<T>::from_shape({});
    out() = T(loss * double(scale));
    if (!(grad_enabled() && logits.requires_grad())) lse = {};
    return make_result<T>(
        std::move(out), {logits},
        [lse = std::move(lse), targets, V, N, on, off, scale, ig = opt.ignore_index](Node<T>& self) {
            const T g = self.grad.data()[0] * scale;
            const T* x = self.parents[0]->value.data();
            auto [d, acc] = grad_target(*self.parents[0]);
            parallel::parallel_for(N, 8, [&, d = d, acc = acc](std::size_t r0, std::size_t r1) {
                for (std::size_t r = r0; r < r1; ++r) {
                    T* dr = d + r * V;
                    if (targets[r] == ig) {
                        if (!acc) std::fill(dr, dr + V, T(0));
                        continue;
                    }
                    // d x_j = g * (softmax(x)_j - q_j)
                    vec::row_affine_exp(x + r * V, V, lse[r], g, -g * off, dr, acc);
                    dr[targets[r]] -= g * on;
                }
            });
        },
        "cross_entropy");
}

#define RELPOS_INST(T)                                                                                    \
    template Array<T> mask_from_bool(const xt::xarray<bool>&);                                             \
    template Var<T> softmax(const Var<T>&, long, const Array<T>*);                                         \
    template Var<T> log_softmax(const Var<T>&, long, const Array<T>*);                                     \
    template Var<T> attention_softmax(const Var<T>&, const Array<T>*, const Array<T>*, bool, std::size_t); \
    template Var<T> cross_entropy(const Var<T>&, const std::vector<std::int32_t>&, const CrossEntropyOptions&);
RELPOS_INST(float)
RELPOS_INST(double)
#undef RELPOS_INST

}  // namespace relpos
