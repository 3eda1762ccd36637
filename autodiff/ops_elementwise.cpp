// Elementwise ops: binary with numpy broadcasting, scalar ops, unary functions.
#include <cmath>

#include <fmt/format.h>

#include "autodiff/ops.hpp"
#include "autodiff/parallel.hpp"

namespace relpos {

namespace {

constexpr std::size_t kGrain = 1 << 14;  // elements per parallel chunk, at least

// Strides of `s` (right-aligned into rank nd) with 0 on broadcast axes.
std::vector<std::size_t> bstrides(const Shape& s, const Shape& out) {
    const std::size_t nd = out.size();
    std::vector<std::size_t> st(nd, 0);
    std::size_t acc = 1;
    for (std::size_t i = s.size(); i-- > 0;) {
        const std::size_t o = nd - s.size() + i;
        st[o] = s[i] == 1 ? 0 : acc;
        acc *= s[i];
    }
    return st;
}

// Calls f(out_index, a_index, b_index) for every element of the broadcast output.
template <class F>
void for_each_broadcast(const Shape& out, const Shape& sa, const Shape& sb, F&& f) {
    const std::size_t nd = out.size();
    const std::size_t total = numel(out);
    if (total == 0) return;
    if (nd == 0) {
        f(0, 0, 0);
        return;
    }
    const auto sta = bstrides(sa, out), stb = bstrides(sb, out);
    std::vector<std::size_t> idx(nd, 0);
    std::size_t ia = 0, ib = 0;
    const std::size_t inner = out[nd - 1], ia_in = sta[nd - 1], ib_in = stb[nd - 1];
    for (std::size_t e = 0; e < total; e += inner) {
        for (std::size_t j = 0; j < inner; ++j) f(e + j, ia + j * ia_in, ib + j * ib_in);
        for (std::size_t i = nd - 1; i-- > 0;) {
            if (++idx[i] < out[i]) {
                ia += sta[i];
                ib += stb[i];
                break;
            }
            ia -= sta[i] * (out[i] - 1);
            ib -= stb[i] * (out[i] - 1);
            idx[i] = 0;
        }
    }
}

// True when `s` (right-aligned, leading 1s ignored) equals the trailing dimensions of `out`.
bool is_suffix(const Shape& s, const Shape& out) {
    std::size_t lead = 0;
    while (lead < s.size() && s[lead] == 1) ++lead;
    const std::size_t n = s.size() - lead;
    if (n == 0 || n > out.size()) return false;
    for (std::size_t i = 0; i < n; ++i)
        if (s[lead + i] != out[out.size() - n + i]) return false;
    return true;
}

enum class BinOp { Add, Sub, Mul, Div };

const char* bin_name(BinOp op) {
    switch (op) {
        case BinOp::Add: return "add";
        case BinOp::Sub: return "sub";
        case BinOp::Mul: return "mul";
        default: return "div";
    }
}

// Calls body(f) with f the op as a function object, so that each loop is compiled (and vectorised) for
// one op instead of switching on the op per element.
template <class T, class Body>
inline void with_op(BinOp op, Body&& body) {
    switch (op) {
        case BinOp::Add: body([](T x, T y) { return x + y; }); break;
        case BinOp::Sub: body([](T x, T y) { return x - y; }); break;
        case BinOp::Mul: body([](T x, T y) { return x * y; }); break;
        default: body([](T x, T y) { return x / y; }); break;
    }
}

template <class T>
Var<T> binary(const Var<T>& a, const Var<T>& b, BinOp op) {
    const Shape sa = a.shape(), sb = b.shape();
    const Shape so = broadcast_shapes(bin_name(op), sa, sb);
    Array<T> out = uninit<T>(so);
    const T* pa = a.data();
    const T* pb = b.data();
    T* po = out.data();
    const std::size_t n = out.size();
    if (sa == so && sb == so) {
        with_op<T>(op, [&](auto f) {
            parallel::parallel_for(n, kGrain, [&](std::size_t i0, std::size_t i1) {
                for (std::size_t i = i0; i < i1; ++i) po[i] = f(pa[i], pb[i]);
            });
        });
    } else if (sa == so && b.numel() == 1) {
        const T y = pb[0];
        with_op<T>(op, [&](auto f) {
            for (std::size_t i = 0; i < n; ++i) po[i] = f(pa[i], y);
        });
    } else if (sa == so && is_suffix(sb, so)) {
        const std::size_t inner = b.numel();
        with_op<T>(op, [&](auto f) {
            for (std::size_t r = 0; r < n / inner; ++r)
                for (std::size_t j = 0; j < inner; ++j) po[r * inner + j] = f(pa[r * inner + j], pb[j]);
        });
    } else {
        with_op<T>(op, [&](auto f) {
            for_each_broadcast(so, sa, sb, [&](std::size_t o, std::size_t i, std::size_t j) { po[o] = f(pa[i], pb[j]); });
        });
    }

    return make_result<T>(
        std::move(out), {a, b},
        [op, sa, sb, so](Node<T>& self) {
            auto& A = *self.parents[0];
            auto& B = *self.parents[1];
            const T* g = self.grad.data();
            const T* pa = A.value.data();
            const T* pb = B.value.data();
            const std::size_t n = self.grad.size();
            // Gradients w.r.t. each input at output resolution, reduced by sum_to when broadcast.
            auto grad_for = [&](bool wrt_a) {
                Array<T> d = uninit<T>(so);
                T* pd = d.data();
                for_each_broadcast(so, sa, sb, [&](std::size_t o, std::size_t i, std::size_t j) {
                    const T x = pa[i], y = pb[j], go = g[o];
                    switch (op) {
                        case BinOp::Add: pd[o] = go; break;
                        case BinOp::Sub: pd[o] = wrt_a ? go : -go; break;
                        case BinOp::Mul: pd[o] = wrt_a ? go * y : go * x; break;
                        default: pd[o] = wrt_a ? go / y : -go * x / (y * y); break;
                    }
                });
                return d;
            };
            if (sa == so && sb == so) {  // fast path, no broadcast
                // d/da and d/db per element; written or added depending on the target's state
                auto run = [&](Node<T>& P, auto&& dfn) {
                    auto [d, acc] = grad_target(P);
                    parallel::parallel_for(n, kGrain, [&, d = d, acc = acc](std::size_t i0, std::size_t i1) {
                        if (acc)
                            for (std::size_t i = i0; i < i1; ++i) d[i] += dfn(i);
                        else
                            for (std::size_t i = i0; i < i1; ++i) d[i] = dfn(i);
                    });
                };
                if (A.requires_grad) {
                    switch (op) {
                        case BinOp::Add:
                        case BinOp::Sub: run(A, [&](std::size_t i) { return g[i]; }); break;
                        case BinOp::Mul: run(A, [&](std::size_t i) { return g[i] * pb[i]; }); break;
                        default: run(A, [&](std::size_t i) { return g[i] / pb[i]; }); break;
                    }
                }
                if (B.requires_grad) {
                    switch (op) {
                        case BinOp::Add: run(B, [&](std::size_t i) { return g[i]; }); break;
                        case BinOp::Sub: run(B, [&](std::size_t i) { return -g[i]; }); break;
                        case BinOp::Mul: run(B, [&](std::size_t i) { return g[i] * pa[i]; }); break;
                        default: run(B, [&](std::size_t i) { return -g[i] * pa[i] / (pb[i] * pb[i]); }); break;
                    }
                }
                return;
            }
            if (A.requires_grad) {
                if ((op == BinOp::Add || op == BinOp::Sub) && sa == so)
                    accumulate_grad(A, self.grad);
                else
                    accumulate_grad(A, grad_for(true));
            }
            if (B.requires_grad) {
                if (op == BinOp::Add)
                    accumulate_grad(B, self.grad);
                else
                    accumulate_grad(B, grad_for(false));
            }
        },
        bin_name(op));
}

// Unary op helper: forward f(x), backward g * df(x, y) where y = f(x).
template <class T, class F, class DF>
Var<T> unary(const Var<T>& a, const char* name, F f, DF df) {
    Array<T> out = uninit<T>(a.shape());
    const T* pa = a.data();
    T* po = out.data();
    const std::size_t n = out.size();
    parallel::parallel_for(n, kGrain, [&](std::size_t i0, std::size_t i1) {
        for (std::size_t i = i0; i < i1; ++i) po[i] = f(pa[i]);
    });
    return make_result<T>(
        std::move(out), {a},
        [df](Node<T>& self) {
            auto& A = *self.parents[0];
            const T* x = A.value.data();
            const T* y = self.value.data();
            const T* g = self.grad.data();
            auto [d, acc] = grad_target(A);
            const std::size_t n = self.grad.size();
            parallel::parallel_for(n, kGrain, [&, d = d, acc = acc](std::size_t i0, std::size_t i1) {
                if (acc)
                    for (std::size_t i = i0; i < i1; ++i) d[i] += g[i] * df(x[i], y[i]);
                else
                    for (std::size_t i = i0; i < i1; ++i) d[i] = g[i] * df(x[i], y[i]);
            });
        },
        name);
}

}  // namespace

template <class T> Var<T> add(const Var<T>& a, const Var<T>& b) { return binary(a, b, BinOp::Add); }
template <class T> Var<T> sub(const Var<T>& a, const Var<T>& b) { return binary(a, b, BinOp::Sub); }
template <class T> Var<T> mul(const Var<T>& a, const Var<T>& b) { return binary(a, b, BinOp::Mul); }
template <class T> Var<T> div(const Var<T>& a, const Var<T>& b) { return binary(a, b, BinOp::Div); }

template <class T>
Var<T> add_scalar(const Var<T>& a, T s) {
    return unary(a, "add_scalar", [s](T x) { return x + s; }, [](T, T) { return T(1); });
}
template <class T>
Var<T> mul_scalar(const Var<T>& a, T s) {
    return unary(a, "mul_scalar", [s](T x) { return x * s; }, [s](T, T) { return s; });
}
template <class T>
Var<T> rdiv_scalar(T s, const Var<T>& a) {
    // d(s/x)/dx = -s/x^2 = -y/x
    return unary(a, "rdiv_scalar", [s](T x) { return s / x; }, [](T x, T y) { return -y / x; });
}
template <class T>
Var<T> pow_scalar(const Var<T>& a, T p) {
    return unary(a, "pow_scalar", [p](T x) { return std::pow(x, p); },
                 [p](T x, T) { return p * std::pow(x, p - T(1)); });
}
template <class T>
Var<T> neg(const Var<T>& a) {
    return unary(a, "neg", [](T x) { return -x; }, [](T, T) { return T(-1); });
}
template <class T>
Var<T> exp(const Var<T>& a) {
    return unary(a, "exp", [](T x) { return std::exp(x); }, [](T, T y) { return y; });
}
template <class T>
Var<T> log(const Var<T>& a) {
    return unary(a, "log", [](T x) { return std::log(x); }, [](T x, T) { return T(1) / x; });
}
template <class T>
Var<T> sqrt(const Var<T>& a) {
    return unary(a, "sqrt", [](T x) { return std::sqrt(x); }, [](T, T y) { return T(0.5) / y; });
}
template <class T>
Var<T> tanh(const Var<T>& a) {
    return unary(a, "tanh", [](T x) { return std::tanh(x); }, [](T, T y) { return T(1) - y * y; });
}
template <class T>
Var<T> sigmoid(const Var<T>& a) {
    return unary(a, "sigmoid", [](T x) { return T(1) / (T(1) + std::exp(-x)); },
                 [](T, T y) { return y * (T(1) - y); });
}
template <class T>
Var<T> relu(const Var<T>& a) {
    return unary(a, "relu", [](T x) { return x > T(0) ? x : T(0); },
                 [](T x, T) { return x > T(0) ? T(1) : T(0); });
}
template <class T>
Var<T> gelu(const Var<T>& a) {
    // gelu(x) = x * Phi(x), Phi the standard normal CDF (exact form, as PyTorch's default).
    constexpr double inv_sqrt2 = 0.70710678118654752440;
    constexpr double inv_sqrt2pi = 0.39894228040143267794;
    return unary(
        a, "gelu", [](T x) { return T(0.5) * x * (T(1) + std::erf(x * T(inv_sqrt2))); },
        [](T x, T) {
            const T cdf = T(0.5) * (T(1) + std::erf(x * T(inv_sqrt2)));
            return cdf + x * T(inv_sqrt2pi) * std::exp(T(-0.5) * x * x);
        });
}

#define RELPOS_INST(T)                                          \
    template Var<T> add(const Var<T>&, const Var<T>&);          \
    template Var<T> sub(const Var<T>&, const Var<T>&);          \
    template Var<T> mul(const Var<T>&, const Var<T>&);          \
    template Var<T> div(const Var<T>&, const Var<T>&);          \
    template Var<T> add_scalar(const Var<T>&, T);               \
    template Var<T> mul_scalar(const Var<T>&, T);               \
    template Var<T> rdiv_scalar(T, const Var<T>&);              \
    template Var<T> pow_scalar(const Var<T>&, T);               \
    template Var<T> neg(const Var<T>&);                         \
    template Var<T> exp(const Var<T>&);                         \
    template Var<T> log(const Var<T>&);                         \
    template Var<T> sqrt(const Var<T>&);                        \
    template Var<T> tanh(const Var<T>&);                        \
    template Var<T> sigmoid(const Var<T>&);                     \
    template Var<T> relu(const Var<T>&);                        \
    template Var<T> gelu(const Var<T>&);
RELPOS_INST(float)
RELPOS_INST(double)
#undef RELPOS_INST

}  // namespace relpos
