// Rotation of coordinate pairs (rotary position embeddings, nn/rotary.hpp) as one op. With tables C, S
// (L, d) holding c(m, i), s(m, i) at both 2i and 2i+1:
//
//   y_2i   = x_2i c - x_2i+1 s,     y_2i+1 = x_2i+1 c + x_2i s
//   dx_2i  = g_2i c + g_2i+1 s,     dx_2i+1 = g_2i+1 c - g_2i s
//
// This is x ⊙ C + (x · R) ⊙ S with R the signed pair swap, the form the rotary encodings used to compose
// from a (rows, d) x (d, d) gemm, two broadcast multiplies and an add: one pass over x instead of four,
// no gemm, one output buffer instead of four. Each product is rounded before the sum (this file is built
// with -ffp-contract=off), so values and gradients are those of the composed form bit for bit.
#include <fmt/format.h>

#include "autodiff/ops.hpp"
#include "autodiff/parallel.hpp"

namespace relpos {

namespace {
constexpr std::size_t kGrain = 1 << 14;  // elements per parallel chunk, at least
}

template <class T>
Var<T> rotate_pairs(const Var<T>& x, const Var<T>& cos, const Var<T>& sin) {
    const Shape s = x.shape();
    if (s.size() < 2 || s.back() % 2 != 0)
        shape_fail("rotate_pairs", fmt::format("x must be (..., L, d) with d even, got {}", shape_str(s)));
    const std::size_t L = s[s.size() - 2], d = s.back();
    if (cos.shape() != Shape{L, d} || sin.shape() != Shape{L, d})
        shape_fail("rotate_pairs", fmt::format("tables must be ({}, {}), got {} and {}", L, d, shape_str(cos.shape()),
                                               shape_str(sin.shape())));
    const std::size_t n = x.value().size(), ld = L * d;
    Array<T> y = uninit<T>(s);  // (..., L, d)
    {
        const T *px = x.data(), *c = cos.data(), *sn = sin.data();
        T* py = y.data();
        // chunks of whole (L, d) blocks, so a block's table index is the offset within it
        parallel::parallel_for(n / ld, std::max<std::size_t>(1, kGrain / ld), [&](std::size_t b0, std::size_t b1) {
            for (std::size_t b = b0; b < b1; ++b) {
                const T* xb = px + b * ld;
                T* yb = py + b * ld;
                // even and odd outputs in two loops: one loop with both would let the vectoriser fuse them
                // into fmaddsub instructions (one rounding), which -ffp-contract=off does not prevent
                for (std::size_t e = 0; e < ld; e += 2) yb[e] = xb[e] * c[e] + -xb[e + 1] * sn[e];
                for (std::size_t e = 0; e < ld; e += 2) yb[e + 1] = xb[e + 1] * c[e + 1] + xb[e] * sn[e + 1];
            }
        });
    }
    return make_result<T>(
        std::move(y), {x},
        [cos, sin, ld, n](Node<T>& self) {
            const T *g = self.grad.data(), *c = cos.data(), *sn = sin.data();
            auto [dx, acc] = grad_target(*self.parents[0]);
            parallel::parallel_for(n / ld, std::max<std::size_t>(1, kGrain / ld), [&, dx = dx, acc = acc](std::size_t b0,
                                                                                                   std::size_t b1) {
                for (std::size_t b = b0; b < b1; ++b) {
                    const T* gb = g + b * ld;
                    T* db = dx + b * ld;
                    // as in the forward, even and odd in loops of their own
                    if (acc) {
                        for (std::size_t e = 0; e < ld; e += 2) db[e] += gb[e] * c[e] + gb[e + 1] * sn[e + 1];
                        for (std::size_t e = 0; e < ld; e += 2) db[e + 1] += gb[e + 1] * c[e + 1] + -(gb[e] * sn[e]);
                    } else {
                        for (std::size_t e = 0; e < ld; e += 2) db[e] = gb[e] * c[e] + gb[e + 1] * sn[e + 1];
                        for (std::size_t e = 0; e < ld; e += 2) db[e + 1] = gb[e + 1] * c[e + 1] + -(gb[e] * sn[e]);
                    }
                }
            });
        },
        "rotate_pairs");
}

template Var<float> rotate_pairs(const Var<float>&, const Var<float>&, const Var<float>&);
template Var<double> rotate_pairs(const Var<double>&, const Var<double>&, const Var<double>&);

}  // namespace relpos
