// Every differentiable op. Each is defined in an ops_*.cpp file with its forward kernel and, right
// below it, the backward closure. Instantiated for float (training) and double (gradient checks).
//
// Shape errors (a user can cause them through a config) throw ShapeError naming the op and shapes.
#pragma once

#include <cstdint>
#include <vector>

#include "autodiff/rng.hpp"
#include "autodiff/var.hpp"

namespace relpos {

// ---- elementwise, numpy broadcasting (ops_elementwise.cpp)
template <class T> Var<T> add(const Var<T>& a, const Var<T>& b);
template <class T> Var<T> sub(const Var<T>& a, const Var<T>& b);
template <class T> Var<T> mul(const Var<T>& a, const Var<T>& b);
template <class T> Var<T> div(const Var<T>& a, const Var<T>& b);
template <class T> Var<T> add_scalar(const Var<T>& a, T s);        // a + s
template <class T> Var<T> mul_scalar(const Var<T>& a, T s);        // a * s
template <class T> Var<T> rdiv_scalar(T s, const Var<T>& a);       // s / a
template <class T> Var<T> pow_scalar(const Var<T>& a, T p);        // a ^ p
template <class T> Var<T> neg(const Var<T>& a);
template <class T> Var<T> exp(const Var<T>& a);
template <class T> Var<T> log(const Var<T>& a);
template <class T> Var<T> sqrt(const Var<T>& a);
template <class T> Var<T> tanh(const Var<T>& a);
template <class T> Var<T> sigmoid(const Var<T>& a);
template <class T> Var<T> relu(const Var<T>& a);
template <class T> Var<T> gelu(const Var<T>& a);  // exact: x * Phi(x)

template <class T> Var<T> operator+(const Var<T>& a, const Var<T>& b) { return add(a, b); }
template <class T> Var<T> operator-(const Var<T>& a, const Var<T>& b) { return sub(a, b); }
template <class T> Var<T> operator*(const Var<T>& a, const Var<T>& b) { return mul(a, b); }
template <class T> Var<T> operator/(const Var<T>& a, const Var<T>& b) { return div(a, b); }
template <class T> Var<T> operator-(const Var<T>& a) { return neg(a); }
template <class T> Var<T> operator+(const Var<T>& a, typename Var<T>::scalar s) { return add_scalar(a, s); }
template <class T> Var<T> operator+(typename Var<T>::scalar s, const Var<T>& a) { return add_scalar(a, s); }
template <class T> Var<T> operator-(const Var<T>& a, typename Var<T>::scalar s) { return add_scalar(a, -s); }
template <class T> Var<T> operator-(typename Var<T>::scalar s, const Var<T>& a) { return add_scalar(neg(a), s); }
template <class T> Var<T> operator*(const Var<T>& a, typename Var<T>::scalar s) { return mul_scalar(a, s); }
template <class T> Var<T> operator*(typename Var<T>::scalar s, const Var<T>& a) { return mul_scalar(a, s); }
template <class T> Var<T> operator/(const Var<T>& a, typename Var<T>::scalar s) { return mul_scalar(a, T(1) / s); }
template <class T> Var<T> operator/(typename Var<T>::scalar s, const Var<T>& a) { return rdiv_scalar(s, a); }

// ---- matrix product (ops_matmul.cpp)
// a (..., M, K) x b (..., K, N) -> (..., M, N); trans_a / trans_b read a as (..., K, M) and b as
// (..., N, K). A 2-D operand is shared across the other's batch (a (B,L,K) x w (K,N) is one gemm over
// B*L rows); otherwise the batch dims must match. Every product is a cblas gemm on flat buffers.
template <class T> Var<T> matmul(const Var<T>& a, const Var<T>& b, bool trans_a = false, bool trans_b = false);

// Fused affine map: x (..., in) · w (in, out) + b (out,) -> (..., out); b may be undefined.
// One gemm with the bias preloaded into the output; the bias gradient is a column sum.
template <class T> Var<T> linear(const Var<T>& x, const Var<T>& w, const Var<T>& b);
// relu(linear(x, w, b)) and linear(x, w, b) * scale as one op: the epilogue runs in place on the gemm's
// output (the same numbers as the two ops, one pass over the output and one gradient buffer fewer).
template <class T> Var<T> linear_relu(const Var<T>& x, const Var<T>& w, const Var<T>& b);
// dropout(relu(linear(x, w, b)), p, rng, training) as one op: the same draws, mask and numbers.
template <class T>
Var<T> linear_relu_dropout(const Var<T>& x, const Var<T>& w, const Var<T>& b, double p, Rng& rng, bool training);
template <class T> Var<T> linear_scaled(const Var<T>& x, const Var<T>& w, const Var<T>& b, T scale);

// ---- rotation of coordinate pairs (ops_rotary.cpp)
// x (..., L, d), d even; cos, sin (L, d) constants (no gradient) holding each pair's value at 2i and 2i+1:
// y_2i = x_2i cos - x_2i+1 sin, y_2i+1 = x_2i+1 cos + x_2i sin (rotary position embeddings, one pass).
template <class T> Var<T> rotate_pairs(const Var<T>& x, const Var<T>& cos, const Var<T>& sin);
// ---- shape (ops_shape.cpp)
template <class T> Var<T> reshape(const Var<T>& a, const Shape& shape);
template <class T> Var<T> permute(const Var<T>& a, const std::vector<std::size_t>& perm);
// permute(reshape(a, view), perm), reshaped to out_shape (empty: the permuted view's shape), in one copy
// instead of two or three (e.g. splitting attention heads: view (B, L, H, d), perm (0, 2, 1, 3)).
template <class T>
Var<T> permute_view(const Var<T>& a, const Shape& view, const std::vector<std::size_t>& perm, const Shape& out_shape = {});
template <class T> Var<T> transpose(const Var<T>& a, long d0 = -2, long d1 = -1);
template <class T> Var<T> slice(const Var<T>& a, long axis, std::size_t start, std::size_t end);  // [start, end)
template <class T> Var<T> concat(const std::vector<Var<T>>& xs, long axis);

// ---- reductions (ops_reduce.cpp)
template <class T> Var<T> sum(const Var<T>& a);  // all elements -> shape ()
template <class T> Var<T> sum(const Var<T>& a, const std::vector<long>& axes, bool keepdims = false);
template <class T> Var<T> mean(const Var<T>& a);
template <class T> Var<T> mean(const Var<T>& a, const std::vector<long>& axes, bool keepdims = false);
// Max along one axis; the gradient goes to the first maximal element.
template <class T> Var<T> max(const Var<T>& a, long axis, bool keepdims = false);

// ---- softmax family (ops_softmax.cpp)
// `mask` (optional) is additive, broadcastable to `a`: 0 keeps, -inf (or a large negative) blocks.
// mask_from_bool turns a boolean mask (true = blocked, as PyTorch's attn_mask) into one.
// A row whose entries are all blocked gives softmax 0 (not NaN) and log_softmax -inf.
template <class T> Array<T> mask_from_bool(const xt::xarray<bool>& blocked);
template <class T> Var<T> softmax(const Var<T>& a, long axis = -1, const Array<T>* mask = nullptr);
template <class T> Var<T> log_softmax(const Var<T>& a, long axis = -1, const Array<T>* mask = nullptr);

// Softmax of attention logits (B, H, Lq, Lk) over keys with the masks applied on the fly (no mask
// tensor is built): key_padding (B, Lk) and attn (Lq, Lk) are additive (0 keeps, -inf blocks), each
// optional; `causal` blocks key j for query i when j > q_offset + i. Fully blocked rows give zeros.
template <class T>
Var<T> attention_softmax(const Var<T>& logits, const Array<T>* key_padding, const Array<T>* attn, bool causal,
                         std::size_t q_offset = 0);

// softmax(q kᵀ + bias + masks) with dropout, times v, one (batch, head) tile at a time (autodiff/ops_attention.cpp):
// q (B, H, Lq, d) already scaled, k (B, H, Lk, d), v (B, H, Lk, dv) -> (B, H, Lq, dv). bias, optional (undefined
// Var for none), is (B or 1, H or 1, Lq, Lk), leading ones optional, and gets its gradient; masks as in
// attention_softmax; dropout with probability drop_p on the weights when rng is given (the draws and mask of
// the dropout op). `weights`, when given, receives the weights before dropout (no gradient through it). The
// same numbers as matmul, attention_softmax, dropout and matmul in a row, up to the order of the products' sums.
//
// rel, optional: a relative logit term in Shaw's bucketed form added to the scores inside the tile,
// rel->q[b,h,i] · rel->table[h][clip(j - i - q_offset, rel->k) + rel->k] with rel->q (B, H, Lq, d) and a
// per-head rel->table (H, 2k+1, d): the tile's (Lq, 2k+1) product and its gather, never a (B, H, Lq, Lk)
// tensor (the same numbers as add_rel_logits, up to the order of the product's sums). Transformer-XL's
// positional term takes this form. Both get their gradients.
template <class T>
struct RelativeLogits {
    Var<T> q;      // (B, H, Lq, d)
    Var<T> table;  // (H, 2k+1, d)
    std::size_t k = 0;
};
//
// v_tokens: v is (B, Lk, H·dv) and the result (B, Lq, H·dv), token by token as the value projection makes v and
// the output projection reads the result: the tiles read and write them at a row stride of H·dv, so no head
// split of v and no merge of the result are copied. The same numbers as v split into heads and the result merged.
template <class T>
Var<T> attention_core(const Var<T>& q, const Var<T>& k, const Var<T>& v, const Var<T>& bias, const Array<T>* key_padding,
                      const Array<T>* attn, bool causal, std::size_t q_offset, double drop_p, Rng* rng,
                      Var<T>* weights = nullptr, const RelativeLogits<T>* rel = nullptr, bool v_tokens = false);
// Whether attention_core takes a bias of shape s for those sizes.
bool attention_core_takes_bias(const Shape& s, std::size_t B, std::size_t H, std::size_t Lq, std::size_t Lk);

// Cross-entropy of logits (..., V) against integer targets (one per row), fused with log-softmax.
// Rows whose target is ignore_index contribute nothing. Label smoothing as PyTorch: the target
// distribution is (1 - eps) * onehot + eps / V. Mean over counted rows, or sum.
struct CrossEntropyOptions {
    int ignore_index = -1;
    double label_smoothing = 0.0;
    bool mean = true;
    // With mean: divide by this many tokens instead of the non-ignored targets of these logits (a
    // data-parallel rank's share of a batch is averaged over the whole batch's tokens); 0 = count them.
    std::size_t mean_over = 0;
};
template <class T>
Var<T> cross_entropy(const Var<T>& logits, const std::vector<std::int32_t>& targets,
                     const CrossEntropyOptions& opt = {});

// ---- layers that are single fused ops (ops_nn.cpp)
// weight (V, D), ids of shape ids_shape -> (ids_shape..., D). Backward scatter-adds into weight.
template <class T>
Var<T> embedding(const Var<T>& weight, const std::vector<std::int32_t>& ids, const Shape& ids_shape);
// Inverted dropout: keeps with probability 1 - p and scales by 1 / (1 - p); identity when !training.
template <class T> Var<T> dropout(const Var<T>& a, double p, Rng& rng, bool training);
// LayerNorm over the last axis: gamma, beta of shape (D,).
template <class T> Var<T> layer_norm(const Var<T>& x, const Var<T>& gamma, const Var<T>& beta, double eps = 1e-5);

// ---- Shaw et al. relative-position terms (ops_relative.cpp)
// Relative bucket of key j for query i (absolute query position i + q_offset): clip(j - i, k) + k.
//   rel_logits: q (B, H, Lq, d), table (2k+1, d) shared across heads or (H, 2k+1, d) per head
//     -> (B, H, Lq, Lk) with out[b,h,i,j] = q[b,h,i] . table[bucket(i,j)]
//     computed as Q·tableᵀ (an (Lq, 2k+1) product) then a gather: never an (Lq, Lk, d) tensor.
//   rel_values: attn (B, H, Lq, Lk), same tables -> (B, H, Lq, d) with
//     out[b,h,i] = sum_j attn[b,h,i,j] table[bucket(i,j)]
//     computed by scatter-adding attn into 2k+1 buckets, then an (Lq, 2k+1)·(2k+1, d) product.
template <class T>
Var<T> rel_logits(const Var<T>& q, const Var<T>& table, std::size_t k, std::size_t lk, std::size_t q_offset = 0);
// add_rel_logits: logits (B, H, Lq, Lk) + rel_logits(q, table, k, Lk, q_offset) as one op (no (Lq, Lk)
//   temporary, the logits' gradient handed through without a copy): what multi-head attention uses.
template <class T>
Var<T> add_rel_logits(const Var<T>& logits, const Var<T>& q, const Var<T>& table, std::size_t k, std::size_t q_offset = 0);
template <class T>
Var<T> rel_values(const Var<T>& attn, const Var<T>& table, std::size_t k, std::size_t q_offset = 0);

}  // namespace relpos
