// Shaw, Uszkoreit & Vaswani (2018) relative-position terms, in the efficient bucketed form.
//
//   e_ij = (q_i · k_j + q_i · wK[clip(j - i, k)]) / sqrt(d)              (eq. 4, second term here)
//   z_i  = sum_j a_ij (v_j + wV[clip(j - i, k)])                          (eq. 3, second term here)
//
// Only 2k+1 distinct relative embeddings exist, so instead of an (Lq, Lk, d) tensor:
//   logits: R = Q · wKᵀ is (Lq, 2k+1), then e_ij += R[i, bucket(i, j)]   (gemm + gather)
//   values: S[i, r] = sum_{j: bucket(i,j) = r} a_ij, then z += S · wV      (scatter-add + gemm)
#include <algorithm>

#include <fmt/format.h>

#include "autodiff/blas.hpp"
#include "autodiff/ops.hpp"

namespace relpos {

namespace {

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

// bucket(i, j) = clip(j - (i + q_offset), k) + k for every (i, j): (Lq, Lk), shared by all b, h.
std::vector<std::uint32_t> buckets(std::size_t Lq, std::size_t Lk, std::size_t k, std::size_t off) {
    std::vector<std::uint32_t> b(Lq * Lk);
    const long K = static_cast<long>(k);
    for (std::size_t i = 0; i < Lq; ++i)
        for (std::size_t j = 0; j < Lk; ++j) {
            const long rel = static_cast<long>(j) - static_cast<long>(i + off);
            b[i * Lk + j] = static_cast<std::uint32_t>(std::clamp(rel, -K, K) + K);
        }
    return b;
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

template <class T>
Var<T> rel_logits(const Var<T>& q, const Var<T>& table, std::size_t k, std::size_t lk, std::size_t q_offset) {
    const RelDims r = check_dims("rel_logits", q.shape(), table.shape(), k, true, lk);
    const std::size_t rows = r.B * r.H * r.Lq;
    Array<T> Rq = uninit<T>({r.B, r.H, r.Lq, r.R});  // (B, H, Lq, 2k+1) = Q · wKᵀ
    table_gemm(r, true, r.d, r.R, q.data(), table.data(), Rq.data(), T(0));
    auto bk = buckets(r.Lq, r.Lk, k, q_offset);
    Array<T> out = uninit<T>({r.B, r.H, r.Lq, r.Lk});  // gather
    {
        const T* src = Rq.data();
        T* dst = out.data();
        for (std::size_t row = 0; row < rows; ++row) {
            const std::uint32_t* bi = bk.data() + (row % r.Lq) * r.Lk;
            const T* s = src + row * r.R;
            T* o = dst + row * r.Lk;
            for (std::size_t j = 0; j < r.Lk; ++j) o[j] = s[bi[j]];
        }
    }
    return make_result<T>(
        std::move(out), {q, table},
        [r, bk = std::move(bk)](Node<T>& self) {
            auto& Q = *self.parents[0];
            auto& W = *self.parents[1];
            const std::size_t rows = r.B * r.H * r.Lq;
            // dR[i, r] = sum_{j: bucket(i,j) = r} dE[i, j]   (transposed gather = scatter-add)
            Array<T> dR = zeros<T>({r.B, r.H, r.Lq, r.R});
            const T* g = self.grad.data();
            T* pr = dR.data();
            for (std::size_t row = 0; row < rows; ++row) {
                const std::uint32_t* bi = bk.data() + (row % r.Lq) * r.Lk;
                const T* gr = g + row * r.Lk;
                T* dr = pr + row * r.R;
                for (std::size_t j = 0; j < r.Lk; ++j) dr[bi[j]] += gr[j];
            }
            if (Q.requires_grad) table_gemm(r, false, r.R, r.d, dR.data(), W.value.data(), grad_ptr(Q), T(1));
            if (W.requires_grad) table_grad(r, dR.data(), Q.value.data(), grad_ptr(W));
        },
        "rel_logits");
}

template <class T>
Var<T> rel_values(const Var<T>& attn, const Var<T>& table, std::size_t k, std::size_t q_offset) {
    const RelDims r = check_dims("rel_values", attn.shape(), table.shape(), k, false, 0);
    const std::size_t rows = r.B * r.H * r.Lq;
    auto bk = buckets(r.Lq, r.Lk, k, q_offset);
    Array<T> S = zeros<T>({r.B, r.H, r.Lq, r.R});  // bucketed attention weights
    {
        const T* a = attn.data();
        T* s = S.data();
        for (std::size_t row = 0; row < rows; ++row) {
            const std::uint32_t* bi = bk.data() + (row % r.Lq) * r.Lk;
            const T* ar = a + row * r.Lk;
            T* sr = s + row * r.R;
            for (std::size_t j = 0; j < r.Lk; ++j) sr[bi[j]] += ar[j];
        }
    }
    Array<T> out = uninit<T>({r.B, r.H, r.Lq, r.d});  // S · wV
    table_gemm(r, false, r.R, r.d, S.data(), table.data(), out.data(), T(0));
    return make_result<T>(
        std::move(out), {attn, table},
        [r, bk = std::move(bk), S = std::move(S)](Node<T>& self) {
            auto& A = *self.parents[0];
            auto& W = *self.parents[1];
            const std::size_t rows = r.B * r.H * r.Lq;
            const T* g = self.grad.data();  // (B, H, Lq, d)
            if (A.requires_grad) {
                Array<T> dS = uninit<T>({r.B, r.H, r.Lq, r.R});  // dZ · wVᵀ
                table_gemm(r, true, r.d, r.R, g, W.value.data(), dS.data(), T(0));
                T* da = grad_ptr(A);
                const T* ps = dS.data();
                for (std::size_t row = 0; row < rows; ++row) {  // gather back to (Lq, Lk)
                    const std::uint32_t* bi = bk.data() + (row % r.Lq) * r.Lk;
                    const T* sr = ps + row * r.R;
                    T* dr = da + row * r.Lk;
                    for (std::size_t j = 0; j < r.Lk; ++j) dr[j] += sr[bi[j]];
                }
            }
            if (W.requires_grad) table_grad(r, S.data(), g, grad_ptr(W));
        },
        "rel_values");
}

#define RELPOS_INST(T)                                                                                  \
    template Var<T> rel_logits(const Var<T>&, const Var<T>&, std::size_t, std::size_t, std::size_t);    \
    template Var<T> rel_values(const Var<T>&, const Var<T>&, std::size_t, std::size_t);
RELPOS_INST(float)
RELPOS_INST(double)
#undef RELPOS_INST

}  // namespace relpos
