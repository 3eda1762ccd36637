// Shaw, Uszkoreit & Vaswani (2018) relative-position terms, in the efficient bucketed form.
//
//   e_ij = (q_i · k_j + q_i · wK[clip(j - i, k)]) / sqrt(d)              (eq. 4, second term here)
//   z_i  = sum_j a_ij (v_j + wV[clip(j - i, k)])                          (eq. 3, second term here)
//
// Only 2k+1 distinct relative embeddings exist, so instead of an (Lq, Lk, d) tensor:
//   logits: R = Q · wKᵀ is (Lq, 2k+1), then e_ij += R[i, bucket(i, j)]   (gemm + gather)
//   values: S[i, r] = sum_{j: bucket(i,j) = r} a_ij, then z += S · wV      (scatter-add + gemm)
#include <algorithm>
#include <functional>

#include <fmt/format.h>

#include "autodiff/blas.hpp"
#include "autodiff/ops.hpp"
#include "autodiff/parallel.hpp"
#include "autodiff/relative_rows.hpp"

namespace relpos {

namespace {

using detail::gather_row;
using detail::row_runs;
using detail::RowRuns;
using detail::scatter_row;

struct RelDims {
    std::size_t B, H, Lq, Lk, d, R;
    bool per_head;
};

RelDims check_dims(const char* op, const Shape& x, const Shape& table, std::size_t k, bool x_is_q, std::size_t lk) {
    if (x.size() != 4)
        shape_fail(op, fmt::format("expects a (B, H, L, {}) input, got {}", x_is_q ? "d" : "Lk", shape_str(x)));
    RelDims r{x[0], x[1], x[2], x_is_q ? lk : x[3], 0, 2 * k + 1, false};
    if (table.size() == 2) {
        r.d = table[1];
        if (table[0] != r.R)
            shape_fail(op, fmt::format("table {} needs 2k+1 = {} rows for k = {}", shape_str(table), r.R, k));
    } else if (table.size() == 3) {
        r.per_head = true;
        r.d = table[2];
        if (table[0] != r.H || table[1] != r.R)
            shape_fail(op, fmt::format("per-head table {} must be (H={}, 2k+1={}, d)", shape_str(table), r.H, r.R));
    } else {
        shape_fail(op, fmt::format("table must be (2k+1, d) or (H, 2k+1, d), got {}", shape_str(table)));
    }
    if (x_is_q && x[3] != r.d)
        shape_fail(op, fmt::format("query {} and table {} differ in head size", shape_str(x), shape_str(table)));
    return r;
}

// Rows (b, h, i) in parallel; each row's work is about Lk.
void for_rows(std::size_t rows, std::size_t Lk, const std::function<void(std::size_t, std::size_t)>& fn) {
    parallel::parallel_for(rows, std::max<std::size_t>(1, 16384 / std::max<std::size_t>(Lk, 1)), fn);
}

// Y (rows, R or d) = X (rows, d or R) · table(ᵀ), over all (b, h) at once when the table is shared,
// per (b, h) block against table[h] otherwise. beta = 1 accumulates.
template <class T>
void table_gemm(const RelDims& r, bool trans_table, std::size_t in_cols, std::size_t out_cols, const T* X,
                const T* table, T* Y, T beta) {
    if (!r.per_head) {
        blas::gemm(false, trans_table, r.B * r.H * r.Lq, out_cols, in_cols, T(1), X, in_cols, table,
                   trans_table ? in_cols : out_cols, beta, Y, out_cols);
        return;
    }
    for (std::size_t b = 0; b < r.B; ++b)
        for (std::size_t h = 0; h < r.H; ++h) {
            const std::size_t blk = (b * r.H + h) * r.Lq;
            blas::gemm(false, trans_table, r.Lq, out_cols, in_cols, T(1), X + blk * in_cols, in_cols,
                       table + h * r.R * r.d, trans_table ? in_cols : out_cols, beta, Y + blk * out_cols, out_cols);
        }
}

// dtable += Aᵀ · Bm where A is (rows, R) and Bm is (rows, d), summed over b (and h when shared).
template <class T>
void table_grad(const RelDims& r, const T* A, const T* Bm, T* dtable) {
    if (!r.per_head) {
        blas::gemm(true, false, r.R, r.d, r.B * r.H * r.Lq, T(1), A, r.R, Bm, r.d, T(1), dtable, r.d);
        return;
    }
    for (std::size_t b = 0; b < r.B; ++b)
        for (std::size_t h = 0; h < r.H; ++h) {
            const std::size_t blk = (b * r.H + h) * r.Lq;
            blas::gemm(true, false, r.R, r.d, r.Lq, T(1), A + blk * r.R, r.R, Bm + blk * r.d, r.d, T(1),
                       dtable + h * r.R * r.d, r.d);
        }
}

}  // namespace

// out = base + gather(Q · wKᵀ), base optional. With a base (the q·k logits) this is one op instead of
// a gather into an (Lq, Lk) temporary plus an add: one pass over the logits forward, and backward
// the logits' gradient is handed through (moved, not copied) while one pass scatters it into dR.
template <class T>
Var<T> rel_logits_impl(const Var<T>* base, const Var<T>& q, const Var<T>& table, std::size_t k, std::size_t lk,
                       std::size_t q_offset, const char* op) {
    const RelDims r = check_dims(op, q.shape(), table.shape(), k, true, lk);
    if (base && base->shape() != Shape{r.B, r.H, r.Lq, r.Lk})
        shape_fail(op, fmt::format("logits {} must be (B, H, Lq, Lk) = {} for query {}", shape_str(base->shape()),
                                   shape_str(Shape{r.B, r.H, r.Lq, r.Lk}), shape_str(q.shape())));
    const std::size_t rows = r.B * r.H * r.Lq;
    Array<T> Rq = uninit<T>({r.B, r.H, r.Lq, r.R});  // (B, H, Lq, 2k+1) = Q · wKᵀ
    table_gemm(r, true, r.d, r.R, q.data(), table.data(), Rq.data(), T(0));
    Array<T> out = uninit<T>({r.B, r.H, r.Lq, r.Lk});
    for_rows(rows, r.Lk, [&](std::size_t r0, std::size_t r1) {
        const T* src = Rq.data();
        T* dst = out.data();
        const T* bs = base ? base->data() : nullptr;
        for (std::size_t row = r0; row < r1; ++row) {
            T* o = dst + row * r.Lk;
            if (bs) std::copy(bs + row * r.Lk, bs + (row + 1) * r.Lk, o);
            gather_row(row_runs(row % r.Lq, r.Lk, k, q_offset), r.Lk, r.R, src + row * r.R, o, bs != nullptr);
        }
    });
    std::vector<Var<T>> parents{q, table};
    if (base) parents.push_back(*base);
    return make_result<T>(
        std::move(out), std::move(parents),
        [r, k, q_offset](Node<T>& self) {
            auto& Q = *self.parents[0];
            auto& W = *self.parents[1];
            const std::size_t rows = r.B * r.H * r.Lq;
            // dR[i, r] = sum_{j: bucket(i,j) = r} dE[i, j]   (transposed gather = scatter-add)
            Array<T> dR = zeros<T>({r.B, r.H, r.Lq, r.R});
            for_rows(rows, r.Lk, [&](std::size_t r0, std::size_t r1) {
                const T* g = self.grad.data();
                T* pr = dR.data();
                for (std::size_t row = r0; row < r1; ++row)
                    scatter_row(row_runs(row % r.Lq, r.Lk, k, q_offset), r.Lk, r.R, g + row * r.Lk, pr + row * r.R);
            });
            if (Q.requires_grad) table_gemm(r, false, r.R, r.d, dR.data(), W.value.data(), grad_ptr(Q), T(1));
            if (W.requires_grad) table_grad(r, dR.data(), Q.value.data(), grad_ptr(W));
            if (self.parents.size() > 2 && self.parents[2]->requires_grad) {
                Node<T>& L = *self.parents[2];
                if (!L.has_grad) {  // this node's gradient is released after this call anyway
                    L.grad = std::move(self.grad);
                    L.has_grad = true;
                } else {
                    accumulate_grad(L, self.grad);
                }
            }
        },
        op);
}

template <class T>
Var<T> rel_logits(const Var<T>& q, const Var<T>& table, std::size_t k, std::size_t lk, std::size_t q_offset) {
    return rel_logits_impl<T>(nullptr, q, table, k, lk, q_offset, "rel_logits");
}

template <class T>
Var<T> add_rel_logits(const Var<T>& logits, const Var<T>& q, const Var<T>& table, std::size_t k, std::size_t q_offset) {
    if (logits.ndim() != 4) shape_fail("add_rel_logits", fmt::format("expects (B, H, Lq, Lk) logits, got {}", shape_str(logits.shape())));
    return rel_logits_impl<T>(&logits, q, table, k, logits.dim(3), q_offset, "add_rel_logits");
}

template <class T>
Var<T> rel_values(const Var<T>& attn, const Var<T>& table, std::size_t k, std::size_t q_offset) {
    const RelDims r = check_dims("rel_values", attn.shape(), table.shape(), k, false, 0);
    const std::size_t rows = r.B * r.H * r.Lq;
    Array<T> S = zeros<T>({r.B, r.H, r.Lq, r.R});  // bucketed attention weights
    for_rows(rows, r.Lk, [&](std::size_t r0, std::size_t r1) {
        const T* a = attn.data();
        T* s = S.data();
        for (std::size_t row = r0; row < r1; ++row)
            scatter_row(row_runs(row % r.Lq, r.Lk, k, q_offset), r.Lk, r.R, a + row * r.Lk, s + row * r.R);
    });
    Array<T> out = uninit<T>({r.B, r.H, r.Lq, r.d});  // S · wV
    table_gemm(r, false, r.R, r.d, S.data(), table.data(), out.data(), T(0));
    return make_result<T>(
        std::move(out), {attn, table},
        [r, k, q_offset, S = std::move(S)](Node<T>& self) {
            auto& A = *self.parents[0];
            auto& W = *self.parents[1];
            const std::size_t rows = r.B * r.H * r.Lq;
            const T* g = self.grad.data();  // (B, H, Lq, d)
            if (A.requires_grad) {
                Array<T> dS = uninit<T>({r.B, r.H, r.Lq, r.R});  // dZ · wVᵀ
                table_gemm(r, true, r.d, r.R, g, W.value.data(), dS.data(), T(0));
                auto [da, acc] = grad_target(A);
                for_rows(rows, r.Lk, [&, da = da, acc = acc](std::size_t r0, std::size_t r1) {
                    for (std::size_t row = r0; row < r1; ++row)  // gather back to (Lq, Lk)
                        gather_row(row_runs(row % r.Lq, r.Lk, k, q_offset), r.Lk, r.R, dS.data() + row * r.R,
                                   da + row * r.Lk, acc);
                });
            }
            if (W.requires_grad) table_grad(r, S.data(), g, grad_ptr(W));
        },
        "rel_values");
}

#define RELPOS_INST(T)                                                                                  \
    template Var<T> rel_logits(const Var<T>&, const Var<T>&, std::size_t, std::size_t, std::size_t);    \
    template Var<T> add_rel_logits(const Var<T>&, const Var<T>&, const Var<T>&, std::size_t, std::size_t); \
    template Var<T> rel_values(const Var<T>&, const Var<T>&, std::size_t, std::size_t);
RELPOS_INST(float)
RELPOS_INST(double)
#undef RELPOS_INST

}  // namespace relpos
