// Gradient checks for every autodiff op, from one table (ggml's test-backend-ops): a row per op variant
// with its input shapes, the domain its inputs are drawn from, and its tolerances. Double precision,
// central differences, every element of every input (autodiff/gradcheck.hpp; PyTorch's eps 1e-6,
// atol 1e-5, rtol 1e-3 unless a row says otherwise).
//
// Coverage is enforced, not hoped for: "gradcheck/every op declared in autodiff/ has a row" reads the
// declarations of autodiff/*.hpp at test time (RELPOS_SOURCE_DIR) and fails naming any op without a
// row, so a new op cannot land unchecked. Parsing the headers rather than keeping a registry means
// there is nothing extra to remember when adding an op: declaring it is what makes the test ask for a
// row. And a row cannot claim an op it does not run: each row's graph must record a node of that op.
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <sstream>

#include "autodiff/parallel.hpp"
#include "tests/helpers.hpp"

using namespace relpos;
using namespace relpos::test;
using V = Var<double>;

namespace {

// Where a row's inputs are drawn from.
struct Domain {
    enum Kind { Normal, Uniform } kind = Normal;
    double a = 1.0, b = 0.0;         // Normal: scale a; Uniform: [a, b]
    std::vector<double> kinks = {};  // elements are moved at least 1e-3 away from these (ReLU's 0)
};
Domain normal(double scale = 1.0) { return {Domain::Normal, scale, 0.0, {}}; }
Domain uniform(double lo, double hi) { return {Domain::Uniform, lo, hi, {}}; }
Domain away_from(std::vector<double> kinks) { return {Domain::Normal, 1.0, 0.0, std::move(kinks)}; }

struct Input {
    Shape shape;
    Domain domain = normal();
};

struct OpRow {
    std::string op;       // the function's name as declared in autodiff/ops.hpp
    std::string variant;  // what this row exercises
    std::vector<Input> inputs;
    std::function<V(const std::vector<V>&)> f;  // rebuilds the graph from the leaves (must be deterministic)
    GradcheckOptions tol = {};
    std::string recorded_as = {};  // the node name when the op records none of its own (transpose -> permute)
};

constexpr double kInf = std::numeric_limits<double>::infinity();

Array<double> causal_mask(std::size_t n) {
    xt::xarray<bool> blocked = xt::xarray<bool>::from_shape({n, n});
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j) blocked(i, j) = j > i;
    return mask_from_bool<double>(blocked);
}

// The table. Each row's inputs are drawn from a seed hashed from its op and variant (make_leaves), so
// adding or moving a row never changes another row's data.
std::vector<OpRow> op_table() {
    std::vector<OpRow> t;
    auto row = [&](std::string op, std::string variant, std::vector<Input> in, std::function<V(const std::vector<V>&)> f,
                   GradcheckOptions tol = {}, std::string recorded_as = {}) {
        t.push_back({std::move(op), std::move(variant), std::move(in), std::move(f), tol, std::move(recorded_as)});
    };
    const Domain positive = uniform(0.5, 2.0);

    // ---- elementwise, numpy broadcasting
    row("add", "same shape", {{{3, 4}}, {{3, 4}}}, [](auto& x) { return add(x[0], x[1]); });
    row("add", "bias (4,) and middle axis (2,1,4) onto (2,3,4)", {{{2, 3, 4}}, {{4}}, {{2, 1, 4}}},
        [](auto& x) { return x[0] + x[1] + x[2]; });
    row("add", "broadcast both ways (3,1)+(1,4)", {{{3, 1}}, {{1, 4}}}, [](auto& x) { return x[0] + x[1]; });
    row("sub", "broadcast (3,1) in the middle of a chain", {{{2, 3, 4}}, {{3, 1}}, {{2, 3, 4}}},
        [](auto& x) { return sub(sub(x[0], x[1]), x[2]); });
    row("mul", "broadcast (1,3,1)", {{{2, 3, 4}}, {{1, 3, 1}}, {{2, 3, 4}}}, [](auto& x) { return x[0] * x[1] * x[2]; });
    row("mul", "0-d scalar tensor broadcast over everything", {{{2, 3, 4}}, {{}}}, [](auto& x) { return x[0] * x[1]; });
    row("div", "denominators in [0.5, 2], broadcast (4,)", {{{3, 4}}, {{4}, positive}, {{3, 4}, positive}},
        [](auto& x) { return (x[0] / x[1]) / x[2]; });
    row("add_scalar", "a + s and s - a", {{{3, 5}}}, [](auto& x) { return (2.0 - x[0]) + 1.5; });
    row("mul_scalar", "a * s and a / s", {{{3, 5}}}, [](auto& x) { return x[0] * 3.0 / 4.0; });
    row("rdiv_scalar", "s / a, a in [0.5, 2]", {{{3, 5}, positive}}, [](auto& x) { return 2.0 / x[0]; });
    row("pow_scalar", "a^2.5, a in [0.5, 2]", {{{3, 5}, positive}}, [](auto& x) { return pow_scalar(x[0], 2.5); });
    row("neg", "-a", {{{4, 3}}}, [](auto& x) { return -x[0]; });
    row("exp", "", {{{4, 3}}}, [](auto& x) { return exp(x[0]); });
    row("log", "a in [0.2, 3]", {{{4, 3}, uniform(0.2, 3.0)}}, [](auto& x) { return log(x[0]); });
    row("sqrt", "a in [0.2, 3]", {{{4, 3}, uniform(0.2, 3.0)}}, [](auto& x) { return sqrt(x[0]); });
    row("tanh", "", {{{4, 3}}}, [](auto& x) { return tanh(x[0]); });
    row("sigmoid", "", {{{4, 3}}}, [](auto& x) { return sigmoid(x[0]); });
    row("relu", "inputs kept 1e-3 away from the kink at 0", {{{5, 6}, away_from({0.0})}}, [](auto& x) { return relu(x[0]); });
    row("gelu", "exact x Phi(x), inputs N(0, 2^2)", {{{5, 6}, normal(2.0)}}, [](auto& x) { return gelu(x[0]); });

    // ---- matrix products
    row("matmul", "2-D", {{{3, 4}}, {{4, 5}}}, [](auto& x) { return matmul(x[0], x[1]); });
    row("matmul", "batched input x shared weight (one gemm)", {{{2, 3, 4}}, {{4, 5}}}, [](auto& x) { return matmul(x[0], x[1]); });
    row("matmul", "batched input x shared weight, trans_b", {{{2, 3, 4}}, {{5, 4}}},
        [](auto& x) { return matmul(x[0], x[1], false, true); });
    row("matmul", "batched both sides", {{{2, 3, 4, 5}}, {{2, 3, 5, 6}}}, [](auto& x) { return matmul(x[0], x[1]); });
    row("matmul", "batched, trans_a", {{{2, 3, 5, 4}}, {{2, 3, 5, 6}}}, [](auto& x) { return matmul(x[0], x[1], true, false); });
    row("matmul", "batched, trans_b", {{{2, 3, 4, 5}}, {{2, 3, 6, 5}}}, [](auto& x) { return matmul(x[0], x[1], false, true); });
    row("matmul", "batched, trans_a and trans_b", {{{2, 3, 5, 4}}, {{2, 3, 6, 5}}},
        [](auto& x) { return matmul(x[0], x[1], true, true); });
    row("matmul", "shared left operand", {{{3, 4}}, {{2, 4, 5}}}, [](auto& x) { return matmul(x[0], x[1]); });
    row("matmul", "transposed batched left x shared weight", {{{2, 4, 3}}, {{4, 5}}},
        [](auto& x) { return matmul(x[0], x[1], true, false); });
    row("linear", "x (2,3,4) w (4,5) + b (5,)", {{{2, 3, 4}}, {{4, 5}}, {{5}}}, [](auto& x) { return linear(x[0], x[1], x[2]); });
    row("linear", "no bias", {{{2, 3, 4}}, {{4, 5}}}, [](auto& x) { return linear(x[0], x[1], V()); });
    row("linear_relu", "x (2,3,4) w (4,5) + b (5,), relu in the epilogue (fixed draw: no output near 0)",
        {{{2, 3, 4}}, {{4, 5}}, {{5}}}, [](auto& x) { return linear_relu(x[0], x[1], x[2]); });
    row("linear_scaled", "x (2,3,4) w (4,5) + b (5,), times 0.35", {{{2, 3, 4}}, {{4, 5}}, {{5}}},
        [](auto& x) { return linear_scaled(x[0], x[1], x[2], 0.35); });

    // ---- rotation of coordinate pairs (constant tables, each pair's value at 2i and 2i+1)
    row("rotate_pairs", "x (2,3,4,6), tables (4,6)", {{{2, 3, 4, 6}}}, [](auto& x) {
        Array<double> c = uninit<double>({4, 6}), s = uninit<double>({4, 6});
        for (std::size_t p = 0; p < 4; ++p)
            for (std::size_t i = 0; i < 6; i += 2) {
                c(p, i) = c(p, i + 1) = std::cos(0.7 * double(p) * double(i + 1));
                s(p, i) = s(p, i + 1) = 1.3 * std::sin(0.7 * double(p) * double(i + 1));  // scaled, as xPos's
            }
        return rotate_pairs(x[0], V(c), V(s));
    });

    // ---- shape
    row("reshape", "(2,3,4) -> (6,4), used twice", {{{2, 3, 4}}},
        [](auto& x) { return reshape(x[0], {6, 4}) * reshape(x[0], {6, 4}); });
    row("permute", "(2,0,1)", {{{2, 3, 4}}}, [](auto& x) { return permute(x[0], {2, 0, 1}); });
    row("permute_view", "split heads: (2,3,4) as (2,3,2,2), (0,2,1,3), used twice", {{{2, 3, 4}}},
        [](auto& x) {
            return permute_view(x[0], {2, 3, 2, 2}, {0, 2, 1, 3}) * permute_view(x[0], {2, 3, 2, 2}, {0, 2, 1, 3});
        },
        {}, "permute");
    row("permute_view", "merge heads: (2,2,3,2), (0,2,1,3) -> (2,3,4)", {{{2, 2, 3, 2}}},
        [](auto& x) { return permute_view(x[0], {2, 2, 3, 2}, {0, 2, 1, 3}, {2, 3, 4}); }, {}, "permute");
    row("transpose", "axes 0 and 2", {{{2, 3, 4}}}, [](auto& x) { return transpose(x[0], 0, 2); }, {}, "permute");
    row("transpose", "last two axes (default)", {{{2, 3, 4}}}, [](auto& x) { return transpose(x[0]); }, {}, "permute");
    row("slice", "middle axis [1, 4)", {{{3, 5, 2}}}, [](auto& x) { return slice(x[0], 1, 1, 4); });
    row("slice", "negative axis [1, 2)", {{{3, 5, 2}}}, [](auto& x) { return slice(x[0], -1, 1, 2); });
    row("concat", "three inputs along axis 1", {{{2, 3, 2}}, {{2, 1, 2}}, {{2, 4, 2}}},
        [](auto& x) { return concat<double>({x[0], x[1], x[2]}, 1); });
    row("concat", "last axis (-1)", {{{2, 3, 2}}, {{2, 3, 5}}}, [](auto& x) { return concat<double>({x[0], x[1]}, -1); });

    // ---- reductions
    row("sum", "all elements", {{{2, 3, 4}}}, [](auto& x) { return sum(x[0]); });
    row("sum", "axis 1", {{{2, 3, 4}}}, [](auto& x) { return sum(x[0], {1}); });
    row("sum", "axes 0 and 2, keepdims", {{{2, 3, 4}}}, [](auto& x) { return sum(x[0], {0, 2}, true); });
    row("mean", "all elements", {{{2, 3, 4}}}, [](auto& x) { return mean(x[0]); });
    row("mean", "last axis, keepdims", {{{2, 3, 4}}}, [](auto& x) { return mean(x[0], {-1}, true); });
    row("max", "axis 1 (random normals: ties have probability 0)", {{{3, 4, 5}}}, [](auto& x) { return max(x[0], 1); });
    row("max", "last axis, keepdims", {{{3, 4, 5}}}, [](auto& x) { return max(x[0], -1, true); });

    // ---- softmax family
    row("softmax", "last axis", {{{2, 3, 5}}}, [](auto& x) { return softmax(x[0], -1); });
    row("softmax", "middle axis", {{{2, 3, 5}}}, [](auto& x) { return softmax(x[0], 1); });
    {
        const Array<double> causal = causal_mask(4);
        row("softmax", "boolean causal mask broadcast over the batch", {{{2, 4, 4}}},
            [causal](auto& x) { return softmax(x[0], -1, &causal); });
        Array<double> m = randn<double>({2, 4, 4}, 48);
        for (std::size_t j = 0; j < 4; ++j) m(1, 2, j) = -kInf;
        row("softmax", "additive float mask with a fully blocked row", {{{2, 4, 4}}},
            [m](auto& x) { return softmax(x[0], -1, &m); });
        row("log_softmax", "boolean causal mask, through exp (exp(-inf) = 0 on blocked entries)", {{{2, 4, 4}}},
            [causal](auto& x) { return exp(log_softmax(x[0], -1, &causal)); });
    }
    row("log_softmax", "last axis", {{{3, 6}}}, [](auto& x) { return log_softmax(x[0], -1); });
    row("log_softmax", "first axis", {{{3, 6}}}, [](auto& x) { return log_softmax(x[0], 0); });
    {
        Array<double> kp = zeros<double>({2, 5}), am = randn<double>({3, 5}, 68);
        kp(1, 4) = kp(1, 3) = -kInf;
        row("attention_softmax", "key padding + additive attention mask", {{{2, 2, 3, 5}}},
            [kp, am](auto& x) { return attention_softmax(x[0], &kp, &am, false, 0); });
        row("attention_softmax", "key padding + causal at query offset 1", {{{2, 2, 3, 5}}},
            [kp](auto& x) { return attention_softmax<double>(x[0], &kp, nullptr, true, 1); });
    }
    {
        // q (B=2, H=2, Lq=3, d=4), k (2, 2, Lk=5, 4), v (2, 2, 5, dv=3); biases full, per head, shared
        Array<double> kp = zeros<double>({2, 5}), am = randn<double>({3, 5}, 69);
        kp(1, 4) = kp(1, 3) = -kInf;
        const std::vector<Input> qkv = {{{2, 2, 3, 4}}, {{2, 2, 5, 4}}, {{2, 2, 5, 3}}};
        row("attention_core", "no bias, no mask", qkv,
            [](auto& x) { return attention_core<double>(x[0], x[1], x[2], V(), nullptr, nullptr, false, 0, 0.0, nullptr); });
        auto with = [&qkv](Shape bias) {
            auto in = qkv;
            in.push_back({bias});
            return in;
        };
        row("attention_core", "bias (B, H, Lq, Lk), key padding + attention mask", with({2, 2, 3, 5}),
            [kp, am](auto& x) { return attention_core<double>(x[0], x[1], x[2], x[3], &kp, &am, false, 0, 0.0, nullptr); });
        row("attention_core", "bias (H, Lq, Lk) broadcast over the batch, causal at query offset 2",
            with({2, 3, 5}),
            [](auto& x) { return attention_core<double>(x[0], x[1], x[2], x[3], nullptr, nullptr, true, 2, 0.0, nullptr); });
        // the relative term: its query (B, H, Lq, d) and per-head table (H, 2k+1, d) as inputs 3 and 4 (5 and 6
        // with a bias); k = 1 clips most distances of the 3 x 5 tile
        auto with_rel = [&qkv](std::size_t k, bool bias) {
            auto in = qkv;
            if (bias) in.push_back({{2, 1, 3, 5}});
            in.push_back({{2, 2, 3, 4}});
            in.push_back({{2, 2 * k + 1, 4}});
            return in;
        };
        row("attention_core", "relative term (k 1), key padding + attention mask", with_rel(1, false),
            [kp, am](auto& x) {
                RelativeLogits<double> rel{x[3], x[4], 1};
                return attention_core<double>(x[0], x[1], x[2], V(), &kp, &am, false, 0, 0.0, nullptr, nullptr, &rel);
            });
        row("attention_core", "relative term (k 3) and bias (B, 1, Lq, Lk), causal at query offset 1",
            with_rel(3, true), [](auto& x) {
                RelativeLogits<double> rel{x[4], x[5], 3};
                return attention_core<double>(x[0], x[1], x[2], x[3], nullptr, nullptr, true, 1, 0.0, nullptr, nullptr, &rel);
            });
        // v and the result token by token: v (B=2, Lk=5, H·dv=6)
        row("attention_core", "v and result token by token, bias (H, Lq, Lk), causal at query offset 1",
            {{{2, 2, 3, 4}}, {{2, 2, 5, 4}}, {{2, 5, 6}}, {{2, 3, 5}}}, [](auto& x) {
                return attention_core<double>(x[0], x[1], x[2], x[3], nullptr, nullptr, true, 1, 0.0, nullptr, nullptr,
                                              nullptr, true);
            });
        row("attention_core", "v and result token by token, relative term (k 1), key padding + attention mask",
            {{{2, 2, 3, 4}}, {{2, 2, 5, 4}}, {{2, 5, 6}}, {{2, 2, 3, 4}}, {{2, 3, 4}}}, [kp, am](auto& x) {
                RelativeLogits<double> rel{x[3], x[4], 1};
                return attention_core<double>(x[0], x[1], x[2], V(), &kp, &am, false, 0, 0.0, nullptr, nullptr, &rel, true);
            });
        auto rng = std::make_shared<Rng>(13);
        row("attention_core", "bias (1, 1, Lq, Lk), key padding, dropout 0.3 (same mask every time)",
            with({1, 1, 3, 5}), [kp, rng](auto& x) {
                rng->reseed(13);
                return attention_core<double>(x[0], x[1], x[2], x[3], &kp, nullptr, false, 0, 0.3, rng.get());
            });
    }
    {
        const std::vector<std::int32_t> tgt = {1, 0, 6, 3, 0, 2};
        row("cross_entropy", "plain, mean", {{{2, 3, 7}}}, [tgt](auto& x) { return cross_entropy(x[0], tgt); });
        CrossEntropyOptions o;
        o.ignore_index = 0;
        o.label_smoothing = 0.1;
        o.mean = false;
        row("cross_entropy", "label smoothing 0.1, padding (0) ignored, sum", {{{2, 3, 7}}},
            [tgt, o](auto& x) { return cross_entropy(x[0], tgt, o); });
        o.mean = true;
        row("cross_entropy", "label smoothing 0.1, padding (0) ignored, mean", {{{2, 3, 7}}},
            [tgt, o](auto& x) { return cross_entropy(x[0], tgt, o); });
    }

    // ---- fused layers
    row("embedding", "repeated ids exercise the scatter-add", {{{6, 4}}},
        [](auto& x) { return embedding(x[0], {1, 3, 1, 5, 0, 3}, {2, 3}); });
    {
        auto rng = std::make_shared<Rng>(7);
        row("dropout", "p = 0.3, training, same mask at every evaluation", {{{4, 8}}}, [rng](auto& x) {
            rng->reseed(7);
            return dropout(x[0], 0.3, *rng, true);
        });
    }
    {
        auto rng = std::make_shared<Rng>(9);
        row("linear_relu_dropout", "x (2,3,4) w (4,5) + b (5,), p = 0.3, training, same mask every time",
            {{{2, 3, 4}}, {{4, 5}}, {{5}}}, [rng](auto& x) {
                rng->reseed(9);
                return linear_relu_dropout(x[0], x[1], x[2], 0.3, *rng, true);
            });
    }
    row("layer_norm", "x (2,3,6), gamma, beta", {{{2, 3, 6}}, {{6}}, {{6}}}, [](auto& x) { return layer_norm(x[0], x[1], x[2]); });

    // ---- Shaw et al. relative terms
    row("rel_logits", "shared table, k = 2, Lk 6 > Lq 4", {{{2, 2, 4, 3}}, {{5, 3}}},
        [](auto& x) { return rel_logits(x[0], x[1], 2, 6, 0); });
    row("rel_logits", "per-head table, query offset 1", {{{2, 2, 4, 3}}, {{2, 5, 3}}},
        [](auto& x) { return rel_logits(x[0], x[1], 2, 6, 1); });
    // Two terms read one query: whichever backward runs second must add to the query's gradient, not
    // overwrite it (in the model q's other consumer, q·kᵀ, always runs later, so only this row sees it).
    row("rel_logits", "one query in two terms (gradient accumulated)", {{{2, 2, 4, 3}}, {{5, 3}}, {{2, 5, 3}}},
        [](auto& x) { return rel_logits(x[0], x[1], 2, 6, 0) + rel_logits(x[0], x[2], 2, 6, 1); });
    // logits + relative term in one op; Lk > Lq with a query offset as in incremental decoding, k = 0 (one
    // bucket) and k larger than the sequence. With "* e" the logits leaf is used twice, so its gradient
    // is accumulated rather than handed through.
    for (std::size_t k : {0, 1, 2, 9}) {
        const std::string ks = "k = " + std::to_string(k);
        row("add_rel_logits", "shared table, query offset 4, " + ks, {{{2, 2, 3, 7}}, {{2, 2, 3, 4}}, {{2 * k + 1, 4}}},
            [k](auto& x) { return add_rel_logits(x[0], x[1], x[2], k, 4); });
        row("add_rel_logits", "per-head table, logits used twice, " + ks, {{{2, 2, 3, 7}}, {{2, 2, 3, 4}}, {{2, 2 * k + 1, 4}}},
            [k](auto& x) { return add_rel_logits(x[0], x[1], x[2], k, 0) * x[0]; });
    }
    row("rel_values", "shared table, k = 2", {{{2, 2, 4, 6}}, {{5, 3}}}, [](auto& x) { return rel_values(x[0], x[1], 2, 0); });
    row("rel_values", "per-head table, query offset 2", {{{2, 2, 4, 6}}, {{2, 5, 3}}},
        [](auto& x) { return rel_values(x[0], x[1], 2, 2); });
    return t;
}

// FNV-1a: a seed that depends only on the row's names (std::hash may differ between libraries).
std::uint64_t row_seed(const OpRow& r) {
    std::uint64_t h = 1469598103934665603ULL;
    for (char c : r.op + "/" + r.variant) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
    return h;
}

std::vector<V> make_leaves(const OpRow& r) {
    std::vector<V> leaves;
    for (std::size_t i = 0; i < r.inputs.size(); ++i) {
        const Input& in = r.inputs[i];
        const std::uint64_t seed = row_seed(r) + i;
        Array<double> a = in.domain.kind == Domain::Uniform ? randu<double>(in.shape, seed, in.domain.a, in.domain.b)
                                                             : randn<double>(in.shape, seed, in.domain.a);
        if (!in.domain.kinks.empty()) move_away_from_kinks(a, in.domain.kinks);
        leaves.push_back(leaf_from(std::move(a)));
    }
    return leaves;
}

// Names of the nodes recorded in the graph below `v`.
std::set<std::string> recorded_ops(const V& v) {
    std::set<std::string> ops;
    std::vector<const Node<double>*> stack{v.node().get()};
    std::set<const Node<double>*> seen;
    while (!stack.empty()) {
        const Node<double>* n = stack.back();
        stack.pop_back();
        if (!seen.insert(n).second) continue;
        ops.insert(n->op);
        for (auto& p : n->parents) stack.push_back(p.get());
    }
    return ops;
}

// The differentiable ops declared in autodiff/'s headers: every `Var<T> name(` at the start of a
// declaration (operators and the tape's own make_result helper excluded).
std::set<std::string> declared_ops() {
    std::set<std::string> ops;
    const std::regex decl(R"((?:^|\s)Var<T>\s+([a-z_][a-z0-9_]*)\s*\()");
    for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(RELPOS_SOURCE_DIR) / "autodiff")) {
        if (e.path().extension() != ".hpp") continue;
        std::ifstream f(e.path());
        std::stringstream ss;
        ss << f.rdbuf();
        const std::string text = ss.str();
        for (std::sregex_iterator it(text.begin(), text.end(), decl), end; it != end; ++it) ops.insert((*it)[1]);
    }
    ops.erase("make_result");  // the tape's node constructor (autodiff/var.hpp), not an op
    return ops;
}

}  // namespace

TEST_CASE("gradcheck/op table", "[gradcheck]") {
    const auto table = op_table();
    for (std::size_t i = 0; i < table.size(); ++i) {
        const OpRow& r = table[i];
        DYNAMIC_SECTION(r.op << (r.variant.empty() ? "" : ": ") << r.variant) {
            const std::vector<V> leaves = make_leaves(r);
            // The row runs the op it names (or the node that op records).
            const std::string node = r.recorded_as.empty() ? r.op : r.recorded_as;
            INFO("the row's graph records " << [&] {
                std::string s;
                for (auto& o : recorded_ops(r.f(leaves))) s += o + " ";
                return s;
            }());
            REQUIRE(recorded_ops(r.f(leaves)).count(node) == 1);
            require_gradcheck([&] { return r.f(leaves); }, leaves, r.tol);
        }
    }
}

TEST_CASE("gradcheck/every op declared in autodiff/ has a row", "[gradcheck]") {
    const auto declared = declared_ops();
    // The parser finds the ops (a regex that matched nothing would make this test vacuous).
    for (const char* op : {"add", "matmul", "layer_norm", "cross_entropy", "rel_values", "attention_softmax"})
        REQUIRE(declared.count(op) == 1);
    std::set<std::string> in_table, rows;
    for (const auto& r : op_table()) {
        in_table.insert(r.op);
        // Catch2 runs only the first of two sections with one name: a duplicate row would be skipped.
        INFO("two rows named '" << r.op << ": " << r.variant << "'");
        CHECK(rows.insert(r.op + ": " + r.variant).second);
    }
    for (const auto& op : declared) {
        INFO("autodiff/ declares the op '" << op << "' but tests/test_gradcheck_ops.cpp's op_table() has no row for it");
        CHECK(in_table.count(op) == 1);
    }
    for (const auto& op : in_table) {
        INFO("op_table() has a row for '" << op << "', which autodiff/ does not declare");
        CHECK(declared.count(op) == 1);
    }
}

TEST_CASE("gradcheck/composite_graph_reuse", "[gradcheck]") {
    // A node used by several consumers must receive the sum of their gradients.
    V a = leaf({3, 4}, 62), w = leaf({4, 4}, 63);
    require_gradcheck(
        [&] {
            V h = tanh(matmul(a, w));
            return h * h + softmax(h, -1) * a;
        },
        {a, w});
}

TEST_CASE("attention_softmax equals softmax with the masks materialised", "[gradcheck]") {
    V x = leaf({2, 2, 3, 5}, 67);
    Array<double> kp = zeros<double>({2, 5}), am = randn<double>({3, 5}, 68);
    kp(1, 4) = kp(1, 3) = -kInf;
    Array<double> full = zeros<double>({2, 2, 3, 5});
    for (std::size_t b = 0; b < 2; ++b)
        for (std::size_t h = 0; h < 2; ++h)
            for (std::size_t i = 0; i < 3; ++i)
                for (std::size_t j = 0; j < 5; ++j) full(b, h, i, j) = kp(b, j) + am(i, j) + (j > i + 1 ? -kInf : 0.0);
    require_close(attention_softmax(x, &kp, &am, true, 1).value(), softmax(x, -1, &full).value(), 1e-14);
}

// The relative term inside the core against the same term as a bias (add_rel_logits' rel_logits): the same
// values and gradients for every input (distances clipped and not, causal with an offset, two threads).
TEST_CASE("attention_core's relative term equals rel_logits as a bias", "[gradcheck]") {
    Array<double> kp = zeros<double>({2, 6});
    kp(1, 5) = -kInf;
    for (int variant = 0; variant < 3; ++variant) {
        INFO("variant " << variant);
        const std::size_t K = variant == 1 ? 6 : 2, off = variant == 2 ? 2 : 0;
        const bool causal = variant == 2;
        const int threads = parallel::num_threads();
        parallel::set_num_threads(variant == 1 ? 2 : 1);
        V q = leaf({2, 3, 4, 5}, 81), k = leaf({2, 3, 6, 5}, 82), v = leaf({2, 3, 6, 2}, 83);
        V rq = leaf({2, 3, 4, 5}, 84), table = leaf({3, 2 * K + 1, 5}, 85);
        RelativeLogits<double> rel{rq, table, K};
        V fused = attention_core<double>(q, k, v, V(), causal ? nullptr : &kp, nullptr, causal, off, 0.0, nullptr, nullptr, &rel);
        V sep = attention_core<double>(q, k, v, rel_logits(rq, table, K, 6, off), causal ? nullptr : &kp, nullptr, causal,
                                       off, 0.0, nullptr);
        require_close(fused.value(), sep.value(), 1e-13);
        const Array<double> r = randn<double>(fused.shape(), 86);
        std::vector<V> in = {q, k, v, rq, table};
        std::vector<Array<double>> gf, gs;
        for (V* out : {&fused, &sep}) {
            for (auto& x : in) x.zero_grad();
            sum(*out * V(r)).backward();
            for (auto& x : in) (out == &fused ? gf : gs).push_back(x.grad());
        }
        parallel::set_num_threads(threads);
        for (std::size_t i = 0; i < in.size(); ++i) {
            INFO("input " << i);
            require_close(gf[i], gs[i], 1e-12);
        }
    }
}

// The fused core against the separate ops it replaces (matmul, bias, attention_softmax, dropout, matmul):
// the same values and gradients, for every input, with each mask, a broadcast bias and dropout.
TEST_CASE("attention_core equals the separate ops", "[gradcheck]") {
    Array<double> kp = zeros<double>({2, 5}), am = randn<double>({3, 5}, 70);
    kp(0, 4) = -kInf;
    kp(1, 0) = kp(1, 1) = kp(1, 2) = kp(1, 3) = kp(1, 4) = -kInf;  // a fully blocked batch row
    for (int variant = 0; variant < 4; ++variant) {
        INFO("variant " << variant);
        V q = leaf({2, 2, 3, 4}, 71), k = leaf({2, 2, 5, 4}, 72), v = leaf({2, 2, 5, 3}, 73);
        V bias = variant == 0 ? V() : leaf(variant == 1 ? Shape{2, 2, 3, 5} : variant == 2 ? Shape{2, 3, 5} : Shape{3, 5}, 74);
        const bool causal = variant == 2;
        const double p = variant == 3 ? 0.25 : 0.0;
        const Array<double>* kpp = variant == 2 ? nullptr : &kp;
        const Array<double>* amp = variant == 1 ? &am : nullptr;
        Rng r1(5), r2(5);
        V fused = attention_core<double>(q, k, v, bias, kpp, amp, causal, 1, p, p > 0 ? &r1 : nullptr);
        V logits = matmul(q, k, false, true);
        if (bias.defined()) logits = logits + bias;
        V w = attention_softmax(logits, kpp, amp, causal, 1);
        if (p > 0) w = dropout(w, p, r2, true);
        V sep = matmul(w, v);
        require_close(fused.value(), sep.value(), 1e-13);
        const Array<double> r = randn<double>(fused.shape(), 75);
        std::vector<V> in = {q, k, v};
        if (bias.defined()) in.push_back(bias);
        std::vector<Array<double>> gf, gs;
        for (V* out : {&fused, &sep}) {
            for (auto& x : in) x.zero_grad();
            sum(*out * V(r)).backward();
            for (auto& x : in) (out == &fused ? gf : gs).push_back(x.grad());
        }
        for (std::size_t i = 0; i < in.size(); ++i) {
            INFO("input " << i);
            require_close(gf[i], gs[i], 1e-12);
        }
    }
}

// v read and the result written token by token, (B, L, H·dv), give bit for bit what v split into heads and the
// result merged give (the same tile products at another row stride), values and every gradient, in float as the
// models train: with dropout, a causal mask, a broadcast bias, and tiles whose rows are no multiple of 8.
TEST_CASE("attention_core: v and the result token by token equal the per-head layout bit for bit", "[gradcheck]") {
    using F = Var<float>;
    const auto same = [](const Array<float>& a, const Array<float>& b) {
        return a.shape() == b.shape() && std::equal(a.begin(), a.end(), b.begin());
    };
    const std::size_t B = 3, H = 4, Lq = 13, Lk = 13, d = 8;
    for (int variant = 0; variant < 3; ++variant) {
        INFO("variant " << variant);
        F q = leaf<float>({B, H, Lq, d}, 91), k = leaf<float>({B, H, Lk, d}, 92);
        F v_tok = leaf<float>({B, Lk, H * d}, 93);
        F bias = variant == 0 ? F() : leaf<float>({H, Lq, Lk}, 94);
        const bool causal = variant == 1;
        const double p = variant == 2 ? 0.2 : 0.0;
        Rng r1(7), r2(7);
        F tok = attention_core<float>(q, k, v_tok, bias, nullptr, nullptr, causal, 0, p, p > 0 ? &r1 : nullptr, nullptr,
                                      nullptr, true);
        F v_heads = permute_view(v_tok, {B, Lk, H, d}, {0, 2, 1, 3});
        F heads = attention_core<float>(q, k, v_heads, bias, nullptr, nullptr, causal, 0, p, p > 0 ? &r2 : nullptr);
        F merged = permute_view(heads, heads.shape(), {0, 2, 1, 3}, {B, Lq, H * d});
        REQUIRE(same(tok.value(), merged.value()));
        const Array<float> r = randn<float>(tok.shape(), 95);
        std::vector<F> in = {q, k, v_tok};
        if (bias.defined()) in.push_back(bias);
        std::vector<Array<float>> g[2];
        int i = 0;
        for (F* out : {&tok, &merged}) {
            for (auto& x : in) x.zero_grad();
            sum(*out * F(r)).backward();
            for (auto& x : in) g[i].push_back(x.grad());
            ++i;
        }
        for (std::size_t j = 0; j < in.size(); ++j) {
            INFO("input " << j);
            REQUIRE(same(g[0][j], g[1][j]));
        }
    }
}
