// Position encodings: a gradient check per encoding and variant, values, options and errors.
#include <cmath>

#include "nn/transformer.hpp"
#include "tests/nn_helpers.hpp"

using namespace relpos;
using namespace relpos::test;
using V = Var<double>;

namespace {
// Gradient check of a tiny encoder-decoder loss with the given position encodings.
void check_model(std::vector<std::pair<std::string, std::map<std::string, std::string>>> spec) {
    auto cfg = tiny_config();
    cfg.dims.d_model = 4;
    cfg.dims.heads = 2;
    cfg.dims.d_ff = 6;
    cfg.src_vocab = cfg.tgt_vocab = 6;
    nn::Transformer<double> model(cfg, positions<double>(spec));
    std::vector<std::int32_t> src = {4, 5, 1, 4, 3, 0}, tgt_in = {2, 4, 5, 2, 5, 0};
    std::vector<std::int32_t> tgt_out = {4, 5, 3, 5, 3, 0};
    auto smask = model.padding_mask(src, 2, 3);
    require_gradcheck(
        [&] {
            model.dropout_rng().reseed(7);
            V mem = model.encode(src, 2, 3, smask);
            return model.decode(tgt_in, 2, 3, mem, smask);
        },
        model.parameters());
}
}  // namespace

TEST_CASE("gradcheck/position/none", "[gradcheck][position]") { check_model({{"none", {}}}); }
TEST_CASE("gradcheck/position/sinusoidal", "[gradcheck][position]") { check_model({{"sinusoidal", {}}}); }
TEST_CASE("gradcheck/position/learned", "[gradcheck][position]") { check_model({{"learned", {{"max_len", "5"}}}}); }
TEST_CASE("gradcheck/position/shaw_shared", "[gradcheck][position]") { check_model({{"shaw", {{"k", "1"}}}}); }
TEST_CASE("gradcheck/position/shaw_k0", "[gradcheck][position]") { check_model({{"shaw", {{"k", "0"}}}}); }
TEST_CASE("gradcheck/position/shaw_per_head", "[gradcheck][position]") {
    check_model({{"shaw", {{"k", "2"}, {"per_head", "true"}}}});
}
TEST_CASE("gradcheck/position/shaw_keys_only", "[gradcheck][position]") {
    check_model({{"shaw", {{"k", "2"}, {"values", "false"}}}});
}
TEST_CASE("gradcheck/position/shaw_values_only", "[gradcheck][position]") {
    check_model({{"shaw", {{"k", "2"}, {"keys", "false"}}}});
}
TEST_CASE("gradcheck/position/shaw_tied", "[gradcheck][position]") {
    check_model({{"shaw", {{"k", "2"}, {"tie", "true"}}}});
}
TEST_CASE("gradcheck/position/shaw_cross_attention", "[gradcheck][position]") {
    check_model({{"shaw", {{"k", "1"}, {"cross_attention", "true"}}}});
}
TEST_CASE("gradcheck/position/sinusoidal_plus_shaw", "[gradcheck][position]") {
    check_model({{"sinusoidal", {}}, {"shaw", {{"k", "2"}}}});
}

TEST_CASE("position/sinusoidal_values", "[position]") {
    Rng rng(1);
    nn::MapOptions o;
    auto pe = nn::make_position<double>("sinusoidal", o, {4, 1, nn::Side::Encoder, &rng});
    V x(zeros<double>({1, 3, 4}));
    auto y = pe->embed(x, 5).value();  // positions 5, 6, 7
    for (std::size_t p = 0; p < 3; ++p) {
        const double pos = 5.0 + p;
        CHECK(y(0, p, 0) == Approx(std::sin(pos)));
        CHECK(y(0, p, 1) == Approx(std::cos(pos)));
        CHECK(y(0, p, 2) == Approx(std::sin(pos / 100.0)));  // 10000^(2/4)
        CHECK(y(0, p, 3) == Approx(std::cos(pos / 100.0)));
    }
}

TEST_CASE("position/learned_over_length_is_a_clear_error", "[position][errors]") {
    Rng rng(1);
    nn::MapOptions o(std::map<std::string, std::string>{{"max_len", "4"}});
    auto pe = nn::make_position<float>("learned", o, {8, 2, nn::Side::Encoder, &rng});
    Var<float> x(zeros<float>({2, 5, 8}));
    try {
        pe->embed(x, 0);
        FAIL("no error for an input longer than max_len");
    } catch (const std::length_error& e) {
        CHECK_THAT(e.what(), Catch::Contains("length 5") && Catch::Contains("max_len 4"));
    }
    // exactly max_len positions fit: zeros in, the table's rows 0..3 out
    const Array<float> y = pe->embed(Var<float>(zeros<float>({2, 4, 8})), 0).value();
    const Array<float> table = pe->named_parameters().at(0).second.value();  // (max_len, D)
    REQUIRE(shape_of(y) == Shape{2, 4, 8});
    REQUIRE(shape_of(table) == Shape{4, 8});
    for (std::size_t b = 0; b < 2; ++b)
        for (std::size_t p = 0; p < 4; ++p)
            for (std::size_t i = 0; i < 8; ++i) CHECK(y(b, p, i) == table(p, i));
    REQUIRE_THROWS_AS(pe->embed(Var<float>(zeros<float>({2, 1, 8})), 4), std::length_error);  // incremental step 5
}

TEST_CASE("position/registry_errors", "[position][errors]") {
    Rng rng(1);
    nn::PositionContext ctx{8, 2, nn::Side::Encoder, &rng};
    nn::MapOptions o1;
    try {
        nn::make_position<float>("shwa", o1, ctx);
        FAIL("unknown type accepted");
    } catch (const nn::OptionError& e) {
        CHECK_THAT(e.what(), Catch::Contains("shwa") && Catch::Contains("did you mean 'shaw'") &&
                                 Catch::Contains("sinusoidal") && Catch::Contains("learned"));
    }
    nn::MapOptions o2(std::map<std::string, std::string>{{"k", "-1"}});
    CHECK_THROWS_WITH(nn::make_position<float>("shaw", o2, ctx), Catch::Contains("'k'") && Catch::Contains("-1"));
    nn::MapOptions o3(std::map<std::string, std::string>{{"tie", "true"}, {"values", "false"}});
    CHECK_THROWS_WITH(nn::make_position<float>("shaw", o3, ctx), Catch::Contains("tie"));
    nn::MapOptions o4(std::map<std::string, std::string>{{"kk", "3"}});
    CHECK_THROWS_WITH(nn::make_position<float>("shaw", o4, ctx), Catch::Contains("did you mean 'k'"));
}

TEST_CASE("position/describe_options", "[position]") {
    auto docs = nn::describe_position_options("shaw");
    std::vector<std::string> keys;
    for (auto& d : docs) keys.push_back(d.key);
    CHECK(keys == std::vector<std::string>{"k", "keys", "values", "tie", "per_head", "cross_attention", "init_rows"});
    CHECK(docs[0].default_value == "16");
}

TEST_CASE("position/shaw_init_rows_sets_the_xavier_bound", "[position]") {
    // The relative tables are Xavier-uniform over (2k+1, d): at k = 256 the bound is sqrt(6 / (513 + d)).
    // init_rows: 33 computes it as for k = 16 from the same draws, so every other parameter is unchanged
    // and every table entry is scaled by the ratio of the two bounds.
    auto cfg = tiny_config();  // head_dim 4
    nn::Transformer<double> plain(cfg, positions<double>({{"shaw", {{"k", "256"}}}}));
    nn::Transformer<double> k16_scale(cfg, positions<double>({{"shaw", {{"k", "256"}, {"init_rows", "33"}}}}));
    const double a513 = std::sqrt(6.0 / (513 + 4)), a33 = std::sqrt(6.0 / (33 + 4));
    auto pp = plain.named_parameters(), pw = k16_scale.named_parameters();
    REQUIRE(pp.size() == pw.size());
    std::size_t tables = 0;
    for (std::size_t i = 0; i < pp.size(); ++i) {
        INFO(pp[i].first);
        REQUIRE(pp[i].first == pw[i].first);
        const auto &x = pp[i].second.value(), &y = pw[i].second.value();
        REQUIRE(x.size() == y.size());
        const bool table = pp[i].first.find("rel_") != std::string::npos;
        tables += table;
        double max_x = 0, max_y = 0, worst = 0;
        for (std::size_t j = 0; j < x.size(); ++j) {
            max_x = std::max(max_x, std::abs(x.flat(j)));
            max_y = std::max(max_y, std::abs(y.flat(j)));
            worst = std::max(worst, std::abs(y.flat(j) - (table ? a33 / a513 : 1.0) * x.flat(j)));
        }
        CHECK(worst < 1e-12);
        if (table) {  // 513 x 4 draws: the largest comes within 1% of the bound
            CHECK(max_x <= a513);
            CHECK(max_x > 0.99 * a513);
            CHECK(max_y <= a33);
            CHECK(max_y > 0.99 * a33);
        }
    }
    CHECK(tables == 4);  // rel_k and rel_v of the encoder's and the decoder's self-attention
}

TEST_CASE("position/shaw_k0_carries_no_position", "[position]") {
    // With k = 0 every pair shares one relative embedding: permuting the input permutes the output
    // of an encoder layer (no position information), as in the paper's Table 2 first row.
    Rng rng(5), drng(6);
    nn::LayerDims d{4, 2, 6, 0.0, 0.0, nn::NormOrder::Post};
    auto pos = positions<double>({{"shaw", {{"k", "0"}}}})({4, 2, nn::Side::Encoder, &rng});
    nn::EncoderLayer<double> layer(d, 0, pos, rng, drng);
    layer.eval();
    Array<double> x = randn<double>({1, 3, 4}, 7), xp = x;
    for (std::size_t j = 0; j < 4; ++j) std::swap(xp(0, 0, j), xp(0, 2, j));
    auto y = layer.forward(V(x), nullptr).value(), yp = layer.forward(V(xp), nullptr).value();
    for (std::size_t j = 0; j < 4; ++j) {
        CHECK(y(0, 0, j) == Approx(yp(0, 2, j)).margin(1e-12));
        CHECK(y(0, 1, j) == Approx(yp(0, 1, j)).margin(1e-12));
    }
    // with k = 1 it does carry position: the same permutation changes the middle token's output
    auto pos1 = positions<double>({{"shaw", {{"k", "1"}}}})({4, 2, nn::Side::Encoder, &rng});
    nn::EncoderLayer<double> layer1(d, 0, pos1, rng, drng);
    layer1.eval();
    auto z = layer1.forward(V(x), nullptr).value(), zp = layer1.forward(V(xp), nullptr).value();
    double diff = 0;
    for (std::size_t j = 0; j < 4; ++j) diff += std::abs(z(0, 1, j) - zp(0, 1, j));
    CHECK(diff > 1e-6);
}
