// One gradient check per autodiff op (double precision, central differences, every element of
// every input), including broadcasting and masked cases.
#include "tests/helpers.hpp"

using namespace relpos;
using namespace relpos::test;
using V = Var<double>;

TEST_CASE("gradcheck/add", "[gradcheck]") {
    SECTION("same shape") {
        V a = leaf({3, 4}, 1), b = leaf({3, 4}, 2);
        require_gradcheck([&] { return add(a, b); }, {a, b});
    }
    SECTION("broadcast bias and middle axis") {
        V a = leaf({2, 3, 4}, 1), b = leaf({4}, 2), c = leaf({2, 1, 4}, 3);
        require_gradcheck([&] { return a + b + c; }, {a, b, c});
    }
    SECTION("broadcast both ways") {
        V a = leaf({3, 1}, 1), b = leaf({1, 4}, 2);
        require_gradcheck([&] { return a + b; }, {a, b});
    }
}

TEST_CASE("gradcheck/sub", "[gradcheck]") {
    V a = leaf({2, 3, 4}, 4), b = leaf({3, 1}, 5), c = leaf({2, 3, 4}, 6);
    require_gradcheck([&] { return sub(sub(a, b), c); }, {a, b, c});
}

TEST_CASE("gradcheck/mul", "[gradcheck]") {
    V a = leaf({2, 3, 4}, 7), b = leaf({1, 3, 1}, 8), c = leaf({2, 3, 4}, 9);
    require_gradcheck([&] { return a * b * c; }, {a, b, c});
    V s = leaf({}, 10);  // a 0-d scalar tensor broadcast over everything
    require_gradcheck([&] { return a * s; }, {a, s});
}

TEST_CASE("gradcheck/div", "[gradcheck]") {
    V a = leaf({3, 4}, 11);
    V b = leaf_from(randu<double>({4}, 12, 0.5, 2.0));
    V c = leaf_from(randu<double>({3, 4}, 13, 0.5, 2.0));
    require_gradcheck([&] { return (a / b) / c; }, {a, b, c});
}

TEST_CASE("gradcheck/scalar_ops", "[gradcheck]") {
    V a = leaf_from(randu<double>({3, 5}, 14, 0.5, 2.0));
    require_gradcheck([&] { return (2.0 - a * 3.0 + 1.5) / 4.0; }, {a});
    require_gradcheck([&] { return 2.0 / a; }, {a});
    require_gradcheck([&] { return pow_scalar(a, 2.5); }, {a});
}

TEST_CASE("gradcheck/neg", "[gradcheck]") {
    V a = leaf({4, 3}, 15);
    require_gradcheck([&] { return -a; }, {a});
}

TEST_CASE("gradcheck/exp", "[gradcheck]") {
    V a = leaf({4, 3}, 16);
    require_gradcheck([&] { return exp(a); }, {a});
}

TEST_CASE("gradcheck/log", "[gradcheck]") {
    V a = leaf_from(randu<double>({4, 3}, 17, 0.2, 3.0));
    require_gradcheck([&] { return log(a); }, {a});
}

TEST_CASE("gradcheck/sqrt", "[gradcheck]") {
    V a = leaf_from(randu<double>({4, 3}, 18, 0.2, 3.0));
    require_gradcheck([&] { return sqrt(a); }, {a});
}

TEST_CASE("gradcheck/tanh", "[gradcheck]") {
    V a = leaf({4, 3}, 19);
    require_gradcheck([&] { return tanh(a); }, {a});
}

TEST_CASE("gradcheck/sigmoid", "[gradcheck]") {
    V a = leaf({4, 3}, 20);
    require_gradcheck([&] { return sigmoid(a); }, {a});
}

TEST_CASE("gradcheck/relu", "[gradcheck]") {
    Array<double> x = randn<double>({5, 6}, 21);
    move_away_from_kinks(x, {0.0});
    V a = leaf_from(x);
    require_gradcheck([&] { return relu(a); }, {a});
}

TEST_CASE("gradcheck/gelu", "[gradcheck]") {
    V a = leaf({5, 6}, 22, 2.0);
    require_gradcheck([&] { return gelu(a); }, {a});
}

TEST_CASE("gradcheck/matmul", "[gradcheck]") {
    SECTION("2-D") {
        V a = leaf({3, 4}, 23), b = leaf({4, 5}, 24);
        require_gradcheck([&] { return matmul(a, b); }, {a, b});
    }
    SECTION("batched input times shared weight (flattened to one gemm)") {
        V a = leaf({2, 3, 4}, 25), w = leaf({4, 5}, 26);
        require_gradcheck([&] { return matmul(a, w); }, {a, w});
        V wt = leaf({5, 4}, 27);
        require_gradcheck([&] { return matmul(a, wt, false, true); }, {a, wt});
    }
    SECTION("batched both sides, every transpose combination") {
        V a = leaf({2, 3, 4, 5}, 28), b = leaf({2, 3, 5, 6}, 29);
        require_gradcheck([&] { return matmul(a, b); }, {a, b});
        V at = leaf({2, 3, 5, 4}, 30), bt = leaf({2, 3, 6, 5}, 31);
        require_gradcheck([&] { return matmul(at, b, true, false); }, {at, b});
        require_gradcheck([&] { return matmul(a, bt, false, true); }, {a, bt});
        require_gradcheck([&] { return matmul(at, bt, true, true); }, {at, bt});
    }
    SECTION("shared left operand, transposed batched left operand") {
        V a = leaf({3, 4}, 32), b = leaf({2, 4, 5}, 33);
        require_gradcheck([&] { return matmul(a, b); }, {a, b});
        V at = leaf({2, 4, 3}, 34), w = leaf({4, 5}, 35);
        require_gradcheck([&] { return matmul(at, w, true, false); }, {at, w});
    }
}

TEST_CASE("gradcheck/permute", "[gradcheck]") {
    V a = leaf({2, 3, 4}, 36);
    require_gradcheck([&] { return permute(a, {2, 0, 1}); }, {a});
    require_gradcheck([&] { return transpose(a, 0, 2); }, {a});
    require_gradcheck([&] { return transpose(a); }, {a});
}

TEST_CASE("gradcheck/reshape", "[gradcheck]") {
    V a = leaf({2, 3, 4}, 37);
    require_gradcheck([&] { return reshape(a, {6, 4}) * reshape(a, {6, 4}); }, {a});
}

TEST_CASE("gradcheck/slice", "[gradcheck]") {
    V a = leaf({3, 5, 2}, 38);
    require_gradcheck([&] { return slice(a, 1, 1, 4); }, {a});
    require_gradcheck([&] { return slice(a, -1, 1, 2); }, {a});
}

TEST_CASE("gradcheck/concat", "[gradcheck]") {
    V a = leaf({2, 3, 2}, 39), b = leaf({2, 1, 2}, 40), c = leaf({2, 4, 2}, 41);
    require_gradcheck([&] { return concat<double>({a, b, c}, 1); }, {a, b, c});
    V d = leaf({2, 3, 5}, 42);
    require_gradcheck([&] { return concat<double>({a, d}, -1); }, {a, d});
}

TEST_CASE("gradcheck/sum", "[gradcheck]") {
    V a = leaf({2, 3, 4}, 43);
    require_gradcheck([&] { return sum(a); }, {a});
    require_gradcheck([&] { return sum(a, {1}); }, {a});
    require_gradcheck([&] { return sum(a, {0, 2}, true); }, {a});
}

TEST_CASE("gradcheck/mean", "[gradcheck]") {
    V a = leaf({2, 3, 4}, 44);
    require_gradcheck([&] { return mean(a); }, {a});
    require_gradcheck([&] { return mean(a, {-1}, true); }, {a});
}

TEST_CASE("gradcheck/max", "[gradcheck]") {
    V a = leaf({3, 4, 5}, 45);  // random normals: ties have probability zero
    require_gradcheck([&] { return max(a, 1); }, {a});
    require_gradcheck([&] { return max(a, -1, true); }, {a});
}

TEST_CASE("gradcheck/softmax", "[gradcheck]") {
    V a = leaf({2, 3, 5}, 46);
    require_gradcheck([&] { return softmax(a, -1); }, {a});
    require_gradcheck([&] { return softmax(a, 1); }, {a});
}

TEST_CASE("gradcheck/softmax_masked", "[gradcheck]") {
    V a = leaf({2, 4, 4}, 47);
    SECTION("boolean causal mask, broadcast over the batch") {
        xt::xarray<bool> blocked = xt::xarray<bool>::from_shape({4, 4});
        for (std::size_t i = 0; i < 4; ++i)
            for (std::size_t j = 0; j < 4; ++j) blocked(i, j) = j > i;
        Array<double> m = mask_from_bool<double>(blocked);
        require_gradcheck([&] { return softmax(a, -1, &m); }, {a});
        require_gradcheck([&] { return exp(log_softmax(a, -1, &m)); }, {a});  // exp(-inf) = 0 on blocked
    }
    SECTION("additive float mask with a fully blocked row") {
        Array<double> m = randn<double>({2, 4, 4}, 48);
        for (std::size_t j = 0; j < 4; ++j) m(1, 2, j) = -std::numeric_limits<double>::infinity();
        require_gradcheck([&] { return softmax(a, -1, &m); }, {a});
    }
}

TEST_CASE("gradcheck/log_softmax", "[gradcheck]") {
    V a = leaf({3, 6}, 49);
    require_gradcheck([&] { return log_softmax(a, -1); }, {a});
    require_gradcheck([&] { return log_softmax(a, 0); }, {a});
}

TEST_CASE("gradcheck/cross_entropy", "[gradcheck]") {
    V logits = leaf({2, 3, 7}, 50);
    std::vector<std::int32_t> tgt = {1, 0, 6, 3, 0, 2};
    SECTION("plain, mean") { require_gradcheck([&] { return cross_entropy(logits, tgt); }, {logits}); }
    SECTION("label smoothing, padding ignored, sum") {
        CrossEntropyOptions o;
        o.ignore_index = 0;
        o.label_smoothing = 0.1;
        o.mean = false;
        require_gradcheck([&] { return cross_entropy(logits, tgt, o); }, {logits});
        o.mean = true;
        require_gradcheck([&] { return cross_entropy(logits, tgt, o); }, {logits});
    }
}

TEST_CASE("gradcheck/embedding", "[gradcheck]") {
    V w = leaf({6, 4}, 51);
    std::vector<std::int32_t> ids = {1, 3, 1, 5, 0, 3};  // repeats exercise the scatter-add
    require_gradcheck([&] { return embedding(w, ids, {2, 3}); }, {w});
}

TEST_CASE("gradcheck/dropout", "[gradcheck]") {
    V a = leaf({4, 8}, 52);
    Rng rng(7);
    require_gradcheck(
        [&] {
            rng.reseed(7);  // same mask at every evaluation
            return dropout(a, 0.3, rng, true);
        },
        {a});
}

TEST_CASE("gradcheck/layer_norm", "[gradcheck]") {
    V x = leaf({2, 3, 6}, 53), g = leaf({6}, 54), b = leaf({6}, 55);
    require_gradcheck([&] { return layer_norm(x, g, b); }, {x, g, b});
}

TEST_CASE("gradcheck/rel_logits", "[gradcheck]") {
    V q = leaf({2, 2, 4, 3}, 56), shared = leaf({5, 3}, 57), per_head = leaf({2, 5, 3}, 58);
    require_gradcheck([&] { return rel_logits(q, shared, 2, 6, 0); }, {q, shared});
    require_gradcheck([&] { return rel_logits(q, per_head, 2, 6, 1); }, {q, per_head});
}

TEST_CASE("gradcheck/add_rel_logits", "[gradcheck]") {
    // logits + relative term in one op; Lk > Lq with a query offset as in incremental decoding, k = 0
    // (one bucket) and k larger than the sequence. The logits leaf is used twice so its gradient is
    // accumulated, not handed through.
    V q = leaf({2, 2, 3, 4}, 64), e = leaf({2, 2, 3, 7}, 65);
    for (std::size_t k : {0, 1, 2, 9}) {
        V shared = leaf({2 * k + 1, 4}, 66 + k), per_head = leaf({2, 2 * k + 1, 4}, 76 + k);
        require_gradcheck([&] { return add_rel_logits(e, q, shared, k, 4); }, {e, q, shared});
        require_gradcheck([&] { return add_rel_logits(e, q, per_head, k, 0) * e; }, {e, q, per_head});
    }
}

TEST_CASE("gradcheck/rel_values", "[gradcheck]") {
    V a = leaf({2, 2, 4, 6}, 59), shared = leaf({5, 3}, 60), per_head = leaf({2, 5, 3}, 61);
    require_gradcheck([&] { return rel_values(a, shared, 2, 0); }, {a, shared});
    require_gradcheck([&] { return rel_values(a, per_head, 2, 2); }, {a, per_head});
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

TEST_CASE("gradcheck/linear", "[gradcheck]") {
    V x = leaf({2, 3, 4}, 64), w = leaf({4, 5}, 65), b = leaf({5}, 66);
    require_gradcheck([&] { return linear(x, w, b); }, {x, w, b});
    require_gradcheck([&] { return linear(x, w, V()); }, {x, w});
}

TEST_CASE("gradcheck/attention_softmax", "[gradcheck]") {
    V x = leaf({2, 2, 3, 5}, 67);
    Array<double> kp = zeros<double>({2, 5}), am = randn<double>({3, 5}, 68);
    kp(1, 4) = kp(1, 3) = -std::numeric_limits<double>::infinity();
    require_gradcheck([&] { return attention_softmax(x, &kp, &am, false, 0); }, {x});
    require_gradcheck([&] { return attention_softmax<double>(x, &kp, nullptr, true, 1); }, {x});
    // equals softmax with the same masks materialised
    Array<double> full = zeros<double>({2, 2, 3, 5});
    for (std::size_t b = 0; b < 2; ++b)
        for (std::size_t h = 0; h < 2; ++h)
            for (std::size_t i = 0; i < 3; ++i)
                for (std::size_t j = 0; j < 5; ++j)
                    full(b, h, i, j) = kp(b, j) + am(i, j) + (j > i + 1 ? -std::numeric_limits<double>::infinity() : 0.0);
    require_close(attention_softmax(x, &kp, &am, true, 1).value(), softmax(x, -1, &full).value(), 1e-14);
}
