// Matrix products through blas::gemm on flat row-major buffers (never N-D xt::linalg::dot): relpos's register kernel
// for thin products (autodiff/small_gemm.hpp, thin_gemm_fits), cblas gemm for the others.
#include <fmt/format.h>

#include "autodiff/blas.hpp"
#include "autodiff/dropout_kernel.hpp"
#include "autodiff/parallel.hpp"
#include "autodiff/ops.hpp"

namespace relpos {

namespace {

struct MatmulPlan {
    // Which operand carries the batch; a 2-D operand is shared across the other's batch.
    enum Kind { Flat, ShareB, ShareA, Batched } kind;
    std::size_t batch, m, n, k;
    Shape out;
};

MatmulPlan plan_matmul(const Shape& sa, const Shape& sb, bool ta, bool tb) {
    auto fail = [&](const std::string& why) {
        shape_fail("matmul", fmt::format("cannot multiply {}{} by {}{}: {}", shape_str(sa), ta ? "ᵀ" : "",
                                         shape_str(sb), tb ? "ᵀ" : "", why));
    };
    if (sa.size() < 2 || sb.size() < 2) fail("both operands need at least 2 dimensions");
    const std::size_t am = ta ? sa[sa.size() - 1] : sa[sa.size() - 2];
    const std::size_t ak = ta ? sa[sa.size() - 2] : sa[sa.size() - 1];
    const std::size_t bk = tb ? sb[sb.size() - 1] : sb[sb.size() - 2];
    const std::size_t bn = tb ? sb[sb.size() - 2] : sb[sb.size() - 1];
    if (ak != bk) fail(fmt::format("inner dimensions {} and {} differ", ak, bk));
    MatmulPlan p{};
    p.m = am;
    p.n = bn;
    p.k = ak;
    const Shape batch_a(sa.begin(), sa.end() - 2), batch_b(sb.begin(), sb.end() - 2);
    if (batch_b.empty()) {
        p.out = batch_a;
        p.batch = numel(batch_a);
        p.kind = ta ? MatmulPlan::ShareB : MatmulPlan::Flat;  // without transpose, a's batch folds into its rows
    } else if (batch_a.empty()) {
        p.out = batch_b;
        p.batch = numel(batch_b);
        p.kind = MatmulPlan::ShareA;
    } else {
        if (batch_a != batch_b)
            fail(fmt::format("batch dimensions {} and {} differ", shape_str(batch_a), shape_str(batch_b)));
        p.out = batch_a;
        p.batch = numel(batch_a);
        p.kind = MatmulPlan::Batched;
    }
    p.out.push_back(p.m);
    p.out.push_back(p.n);
    return p;
}

}  // namespace

template <class T>
Var<T> matmul(const Var<T>& a, const Var<T>& b, bool ta, bool tb) {
    const MatmulPlan p = plan_matmul(a.shape(), b.shape(), ta, tb);
    Array<T> out = uninit<T>(p.out);  // (..., M, N)
    const std::size_t lda = ta ? p.m : p.k, ldb = tb ? p.k : p.n;
    const std::size_t sa = p.m * p.k, sb = p.k * p.n, sc = p.m * p.n;
    const T* A = a.data();
    const T* B = b.data();
    T* C = out.data();
    switch (p.kind) {
        case MatmulPlan::Flat:
            blas::gemm(false, tb, p.batch * p.m, p.n, p.k, T(1), A, lda, B, ldb, T(0), C, p.n);
            break;
        default:  // one gemm per batch entry, entries spread over the pool
            parallel::parallel_for(p.batch, 1, [&](std::size_t i0, std::size_t i1) {
                for (std::size_t i = i0; i < i1; ++i) {
                    const T* Ai = p.kind == MatmulPlan::ShareA ? A : A + i * sa;
                    const T* Bi = p.kind == MatmulPlan::ShareB ? B : B + i * sb;
                    blas::gemm(ta, tb, p.m, p.n, p.k, T(1), Ai, lda, Bi, ldb, T(0), C + i * sc, p.n);
                }
            });
            break;
    }

    return make_result<T>(
        std::move(out), {a, b},
        [p, ta, tb, lda, ldb, sa, sb, sc](Node<T>& self) {
            auto& NA = *self.parents[0];
            auto& NB = *self.parents[1];
            const T* A = NA.value.data();
            const T* B = NB.value.data();
            const T* G = self.grad.data();  // (..., M, N)
            // C = op(A) op(B):
            //   d op(A) = G op(B)ᵀ      -> dA = G op(B)ᵀ, or (op(B) Gᵀ) when A is read transposed
            //   d op(B) = op(A)ᵀ G      -> dB = op(A)ᵀ G, or (Gᵀ op(A)) when B is read transposed
            T beta_a = T(1), beta_b = T(1);  // set per call below
            auto dA_gemm = [&](std::size_t rows, const T* Bp, const T* Gp, T* dAp) {
                if (!ta)
                    blas::gemm(false, !tb, rows, p.k, p.n, T(1), Gp, p.n, Bp, ldb, beta_a, dAp, p.k);
                else
                    blas::gemm(tb, true, p.k, p.m, p.n, T(1), Bp, ldb, Gp, p.n, beta_a, dAp, p.m);
            };
            auto dB_gemm = [&](std::size_t rows, const T* Ap, const T* Gp, T* dBp) {
                if (!tb)
                    blas::gemm(!ta, false, p.k, p.n, rows, T(1), Ap, lda, Gp, p.n, beta_b, dBp, p.n);
                else
                    blas::gemm(true, ta, p.n, p.k, rows, T(1), Gp, p.n, Ap, lda, beta_b, dBp, p.k);
            };
            // Gradients a single gemm covers completely are assigned when fresh (beta 0); those summed
            // over a shared operand's batch start from zero.
            T* dA = nullptr;
            T* dB = nullptr;
            T betaA = T(1), betaB = T(1);
            if (NA.requires_grad) {
                if (p.kind == MatmulPlan::Flat || p.kind == MatmulPlan::Batched || p.kind == MatmulPlan::ShareB) {
                    auto [ptr, acc] = grad_target(NA);
                    dA = ptr;
                    betaA = acc ? T(1) : T(0);
                } else {
                    dA = grad_ptr(NA);
                }
            }
            if (NB.requires_grad) {
                if (p.kind == MatmulPlan::Flat || p.kind == MatmulPlan::Batched || p.kind == MatmulPlan::ShareA) {
                    auto [ptr, acc] = grad_target(NB);
                    dB = ptr;
                    betaB = acc ? T(1) : T(0);
                } else {
                    dB = grad_ptr(NB);
                }
            }
            switch (p.kind) {
                case MatmulPlan::Flat:  // A folded to (batch*M, K), B shared
                    beta_a = betaA;
                    beta_b = betaB;
                    if (dA) dA_gemm(p.batch * p.m, B, G, dA);
                    if (dB) dB_gemm(p.batch * p.m, A, G, dB);
                    break;
                case MatmulPlan::ShareB:  // dA per entry in parallel; dB sums over entries, in order
                    beta_a = betaA;
                    if (dA)
                        parallel::parallel_for(p.batch, 1, [&](std::size_t i0, std::size_t i1) {
                            for (std::size_t i = i0; i < i1; ++i) dA_gemm(p.m, B, G + i * sc, dA + i * sa);
                        });
                    if (dB)
                        for (std::size_t i = 0; i < p.batch; ++i) dB_gemm(p.m, A + i * sa, G + i * sc, dB);
                    break;
                case MatmulPlan::ShareA:
                    beta_b = betaB;
                    if (dB)
                        parallel::parallel_for(p.batch, 1, [&](std::size_t i0, std::size_t i1) {
                            for (std::size_t i = i0; i < i1; ++i) dB_gemm(p.m, A, G + i * sc, dB + i * sb);
                        });
                    if (dA)
                        for (std::size_t i = 0; i < p.batch; ++i) dA_gemm(p.m, B + i * sb, G + i * sc, dA);
                    break;
                case MatmulPlan::Batched:
                    beta_a = betaA;
                    beta_b = betaB;
                    parallel::parallel_for(p.batch, 1, [&](std::size_t i0, std::size_t i1) {
                        for (std::size_t i = i0; i < i1; ++i) {
                            if (dA) dA_gemm(p.m, B + i * sb, G + i * sc, dA + i * sa);
                            if (dB) dB_gemm(p.m, A + i * sa, G + i * sc, dB + i * sb);
                        }
                    });
                    break;
            }
        },
        "matmul");
}

namespace {
// linear with an elementwise epilogue applied in place to the gemm's output (the same numbers as the
// separate ops after it, without their passes over the output and their gradient buffers): relu, then
// dropout with probability drop_p from *rng when rng is set; or a scale.
enum class Epilogue { None, Relu, Scale };

template <class T>
Var<T> linear_with(const Var<T>& x, const Var<T>& w, const Var<T>& b, Epilogue epi, T scale, const char* name,
                   double drop_p = 0, Rng* rng = nullptr) {
    const Shape sx = x.shape(), sw = w.shape();
    if (sx.empty() || sw.size() != 2 || sx.back() != sw[0])
        shape_fail(name, fmt::format("cannot multiply {} by weight {}", shape_str(sx), shape_str(sw)));
    const std::size_t in = sw[0], out = sw[1], rows = x.numel() / std::max<std::size_t>(in, 1);
    if (b.defined() && b.shape() != Shape{out})
        shape_fail(name, fmt::format("bias {} does not match weight {}", shape_str(b.shape()), shape_str(sw)));
    if (rng && epi != Epilogue::Relu) throw std::logic_error(fmt::format("{}: dropout follows relu only", name));
    Shape so = sx;
    so.back() = out;
    Array<T> y = uninit<T>(so);  // (rows, out)
    T* py = y.data();
    if (b.defined())
        for (std::size_t r = 0; r < rows; ++r) std::copy_n(b.data(), out, py + r * out);
    blas::gemm(false, false, rows, out, in, T(1), x.data(), in, w.data(), out, b.defined() ? T(1) : T(0), py, out);
    const std::size_t n = rows * out;
    constexpr std::size_t kGrain = 1 << 14;  // elements per parallel chunk, at least
    if (epi != Epilogue::None)
        parallel::parallel_for(n, kGrain, [&](std::size_t i0, std::size_t i1) {
            T* __restrict o = py;  // locals, as in the backward below
            const T s = scale;
            if (epi == Epilogue::Relu)
                for (std::size_t i = i0; i < i1; ++i) o[i] = o[i] > T(0) ? o[i] : T(0);
            else
                for (std::size_t i = i0; i < i1; ++i) o[i] = o[i] * s;
        });
    std::vector<std::uint8_t> keep;
    if (rng) {
        keep.resize(n);
        detail::dropout_forward(py, py, n, drop_p, *rng, keep.data());
    }
    const T drop_scale = rng ? detail::dropout_scale<T>(drop_p) : T(1);
    std::vector<Var<T>> parents = {x, w};
    if (b.defined()) parents.push_back(b);
    return make_result<T>(
        std::move(y), parents,
        [rows, in, out, epi, scale, keep = std::move(keep), drop_scale](Node<T>& self) {
            auto& X = *self.parents[0];
            auto& W = *self.parents[1];
            // The epilogue's backward in place on this node's own gradient (released after this call), in
            // the separate ops' order: dropout's g * (keep * 1 / (1 - p)), then relu's mask (its output
            // > 0; where dropout zeroed the output, the gradient is already a zero of the same sign),
            // or the scale.
            T* gm = self.grad.data();  // (rows, out)
            const T* yv = self.value.data();
            const std::uint8_t* kp = keep.empty() ? nullptr : keep.data();
            if (epi != Epilogue::None)
                parallel::parallel_for(rows * out, 1 << 14, [&](std::size_t i0, std::size_t i1) {
                    // locals, not the closure's members: a store to g could alias those, and the loops would
                    // re-read them at every element instead of running in vector registers
                    T* __restrict g = gm;
                    const T* __restrict y = yv;
                    const std::uint8_t* __restrict k = kp;
                    const T s = scale, ds = drop_scale;
                    // relu's mask as T(y > 0), 1 or 0 (vectorised with -fno-trapping-math, CMakeLists.txt)
                    if (epi == Epilogue::Scale)
                        for (std::size_t i = i0; i < i1; ++i) g[i] = g[i] * s;
                    else if (k)  // one pass, the two products in the separate ops' order
                        for (std::size_t i = i0; i < i1; ++i) g[i] = (g[i] * (T(k[i]) * ds)) * T(y[i] > T(0));
                    else
                        for (std::size_t i = i0; i < i1; ++i) g[i] = g[i] * T(y[i] > T(0));
                });
            const T* g = gm;
            if (X.requires_grad) {  // dX = G Wᵀ (assigned when X has no gradient yet)
                auto [dx, acc] = grad_target(X);
                blas::gemm(false, true, rows, in, out, T(1), g, out, W.value.data(), out, acc ? T(1) : T(0), dx, in);
            }
            if (W.requires_grad)            // dW = Xᵀ G
                blas::gemm(true, false, in, out, rows, T(1), X.value.data(), in, g, out, T(1), grad_ptr(W), out);
            if (self.parents.size() > 2 && self.parents[2]->requires_grad) {
                T* db = grad_ptr(*self.parents[2]);
                for (std::size_t r = 0; r < rows; ++r)
                    for (std::size_t j = 0; j < out; ++j) db[j] += g[r * out + j];
            }
        },
        name);
}
}  // namespace

template <class T>
Var<T> linear(const Var<T>& x, const Var<T>& w, const Var<T>& b) {
    return linear_with(x, w, b, Epilogue::None, T(1), "linear");
}
template <class T>
Var<T> linear_relu(const Var<T>& x, const Var<T>& w, const Var<T>& b) {
    return linear_with(x, w, b, Epilogue::Relu, T(1), "linear_relu");
}
template <class T>
Var<T> linear_relu_dropout(const Var<T>& x, const Var<T>& w, const Var<T>& b, double p, Rng& rng, bool training) {
    if (p < 0 || p >= 1) throw std::invalid_argument(fmt::format("dropout: p must be in [0, 1), got {}", p));
    if (!training || p == 0) return linear_relu(x, w, b);
    return linear_with(x, w, b, Epilogue::Relu, T(1), "linear_relu_dropout", p, &rng);
}
template <class T>
Var<T> linear_scaled(const Var<T>& x, const Var<T>& w, const Var<T>& b, T scale) {
    return linear_with(x, w, b, Epilogue::Scale, scale, "linear_scaled");
}

template Var<float> linear(const Var<float>&, const Var<float>&, const Var<float>&);
template Var<double> linear(const Var<double>&, const Var<double>&, const Var<double>&);
template Var<float> linear_relu(const Var<float>&, const Var<float>&, const Var<float>&);
template Var<double> linear_relu(const Var<double>&, const Var<double>&, const Var<double>&);
template Var<float> linear_relu_dropout(const Var<float>&, const Var<float>&, const Var<float>&, double, Rng&, bool);
template Var<double> linear_relu_dropout(const Var<double>&, const Var<double>&, const Var<double>&, double, Rng&, bool);
template Var<float> linear_scaled(const Var<float>&, const Var<float>&, const Var<float>&, float);
template Var<double> linear_scaled(const Var<double>&, const Var<double>&, const Var<double>&, double);
template Var<float> matmul(const Var<float>&, const Var<float>&, bool, bool);
template Var<double> matmul(const Var<double>&, const Var<double>&, bool, bool);

}  // namespace relpos
