// End to end: a 2-layer MLP trained with Adam on a real function (y = sin(3x) * x) must cut its
// mean squared error by a large factor, and SGD must reduce it too.
#include <cmath>

#include "nn/mlp.hpp"
#include "nn/optim.hpp"
#include "tests/helpers.hpp"

using namespace relpos;

namespace {
struct Data {
    Var<float> x, y;
};
Data make_data(std::size_t n) {
    Array<float> x = uninit<float>({n, 1}), y = uninit<float>({n, 1});
    for (std::size_t i = 0; i < n; ++i) {
        const float xi = -2.f + 4.f * float(i) / float(n - 1);
        x(i, 0) = xi;
        y(i, 0) = std::sin(3.f * xi) * xi;
    }
    return {Var<float>(x), Var<float>(y)};
}
template <class Opt>
std::pair<double, double> fit(nn::MLP<float>& model, Opt& opt, const Data& d, int steps, double lr) {
    double first = 0, last = 0;
    for (int s = 0; s < steps; ++s) {
        opt.zero_grad();
        Var<float> diff = model.forward(d.x) - d.y;
        Var<float> loss = mean(diff * diff);
        loss.backward();
        opt.step(lr);
        if (s == 0) first = loss.item();
        last = loss.item();
    }
    return {first, last};
}
}  // namespace

TEST_CASE("training/mlp_adam_fits_function", "[training]") {
    Rng rng(42);
    nn::MLP<float> model(1, 32, 1, rng);
    nn::AdamOptions ao;
    ao.beta2 = 0.999;
    ao.eps = 1e-8;
    nn::Adam<float> opt(model.named_parameters(), ao);
    auto [first, last] = fit(model, opt, make_data(256), 1500, 1e-2);
    INFO("first " << first << " last " << last);
    REQUIRE(std::isfinite(last));
    REQUIRE(last < first / 50);
}

TEST_CASE("training/mlp_sgd_reduces_loss", "[training]") {
    Rng rng(43);
    nn::MLP<float> model(1, 32, 1, rng);
    nn::SGD<float> opt(model.named_parameters());
    auto [first, last] = fit(model, opt, make_data(256), 1000, 0.05);
    INFO("first " << first << " last " << last);
    REQUIRE(last < first / 3);
}

TEST_CASE("optim/inverse_sqrt_schedule", "[optim]") {
    // peak at step == warmup: d^-0.5 * warmup^-0.5
    REQUIRE(nn::inverse_sqrt_lr(4000, 512, 4000) == Approx(std::pow(512.0, -0.5) * std::pow(4000.0, -0.5)));
    REQUIRE(nn::inverse_sqrt_lr(100, 512, 4000) < nn::inverse_sqrt_lr(200, 512, 4000));   // warming up
    REQUIRE(nn::inverse_sqrt_lr(8000, 512, 4000) < nn::inverse_sqrt_lr(4000, 512, 4000));  // decaying
    REQUIRE(nn::inverse_sqrt_lr(16000, 512, 4000) == Approx(nn::inverse_sqrt_lr(4000, 512, 4000) / 2));
}

TEST_CASE("optim/clip_grad_norm", "[optim]") {
    Var<double> a(full<double>({4}, 0.0), true);
    sum(a * 3.0).backward();  // grad 3 each, norm 6
    nn::NamedParams<double> ps = {{"a", a}};
    REQUIRE(nn::clip_grad_norm(ps, 1.0) == Approx(6.0));
    REQUIRE(nn::grad_norm(ps) == Approx(1.0).epsilon(1e-5));
}
