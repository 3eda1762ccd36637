// Masks (padded keys get exactly zero weight; causal attention passes exactly zero gradient from
// the future) and incremental decoding equal to full decoding for every position encoding.
#include "nn/transformer.hpp"
#include "tests/nn_helpers.hpp"

using namespace relpos;
using namespace relpos::test;
using V = Var<double>;

TEST_CASE("masks/padded_key_gets_zero_weight", "[masks]") {
    Rng rng(1), drng(2);
    nn::AttentionSite site{nn::AttentionSite::EncoderSelf, 0, 2, 4};
    auto pos = positions<double>({{"shaw", {{"k", "2"}}}})({8, 2, nn::Side::Encoder, &rng});
    nn::MultiHeadAttention<double> mha(8, 2, 0.0, site, pos, rng, drng);
    V x = leaf({2, 5, 8}, 3);
    SECTION("key padding from lengths (additive)") {
        auto mask = nn::AttentionMask<double>::from_lengths({5, 3}, 5);
        V w;
        mha.forward(x, x, &mask, nullptr, 0, &w);
        for (std::size_t h = 0; h < 2; ++h)
            for (std::size_t i = 0; i < 5; ++i) {
                REQUIRE(w.value()(1, h, i, 3) == 0.0);
                REQUIRE(w.value()(1, h, i, 4) == 0.0);
                REQUIRE(w.value()(0, h, i, 4) > 0.0);
            }
    }
    SECTION("key padding as a boolean mask") {
        xt::xarray<bool> pad = xt::xarray<bool>::from_shape({2, 5});
        for (std::size_t i = 0; i < 10; ++i) pad.data()[i] = (i == 1 || i == 9);
        nn::AttentionMask<double> mask;
        mask.set_key_padding(pad);
        V w;
        mha.forward(x, x, &mask, nullptr, 0, &w);
        for (std::size_t i = 0; i < 5; ++i) {
            REQUIRE(w.value()(0, 1, i, 1) == 0.0);
            REQUIRE(w.value()(1, 0, i, 4) == 0.0);
        }
    }
}

TEST_CASE("masks/causal_gradient_from_future_is_zero", "[masks]") {
    Rng rng(4), drng(5);
    nn::AttentionSite site{nn::AttentionSite::DecoderSelf, 0, 2, 4};
    for (std::string type : {"none", "shaw"}) {
        auto pos = type == "none" ? positions<double>({{"none", {}}})({8, 2, nn::Side::Decoder, &rng})
                                  : positions<double>({{"shaw", {{"k", "3"}}}})({8, 2, nn::Side::Decoder, &rng});
        nn::MultiHeadAttention<double> mha(8, 2, 0.0, site, pos, rng, drng);
        const std::size_t L = 6;
        for (std::size_t i = 0; i < L; ++i) {
            V x = leaf({1, L, 8}, 6);
            V y = mha.forward(x, x, nullptr);
            Array<double> seed = zeros<double>({1, L, 8});
            for (std::size_t c = 0; c < 8; ++c) seed(0, i, c) = 1.0 + c;  // d(output row i)
            y.backward(seed);
            for (std::size_t j = 0; j < L; ++j) {
                double g = 0;
                for (std::size_t c = 0; c < 8; ++c) g += std::abs(x.grad()(0, j, c));
                INFO(type << ": output " << i << ", input " << j);
                if (j > i)
                    REQUIRE(g == 0.0);  // exactly zero
                else
                    REQUIRE(g > 0.0);
            }
        }
    }
}


TEST_CASE("incremental/sinusoidal", "[incremental]") { incremental_equals_full({{"sinusoidal", {}}}); }
TEST_CASE("incremental/learned", "[incremental]") { incremental_equals_full({{"learned", {{"max_len", "16"}}}}); }
TEST_CASE("incremental/shaw", "[incremental]") {
    incremental_equals_full({{"shaw", {{"k", "2"}}}});
    incremental_equals_full({{"shaw", {{"k", "1"}, {"per_head", "true"}, {"cross_attention", "true"}}}},
                            nn::NormOrder::Pre);
    incremental_equals_full({{"sinusoidal", {}}, {"shaw", {{"k", "3"}, {"tie", "true"}}}});
}
TEST_CASE("incremental/none", "[incremental]") { incremental_equals_full({{"none", {}}}); }
