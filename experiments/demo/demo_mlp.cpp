// A tiny demonstration that the engine trains: fit y = sin(3x) x with a 2-layer MLP and Adam,
// printing the loss as it falls. (`make run` falls back to this until the experiment runner exists.)
#include <cmath>
#include <cstdio>

#include "nn/mlp.hpp"
#include "nn/optim.hpp"

using namespace relpos;

int main() {
    const std::size_t n = 256;
    Array<float> x = uninit<float>({n, 1}), y = uninit<float>({n, 1});
    for (std::size_t i = 0; i < n; ++i) {
        x(i, 0) = -2.f + 4.f * float(i) / float(n - 1);
        y(i, 0) = std::sin(3.f * x(i, 0)) * x(i, 0);
    }
    Var<float> X(x), Y(y);
    Rng rng(42);
    nn::MLP<float> model(1, 32, 1, rng);
    nn::AdamOptions ao;
    ao.beta2 = 0.999;
    ao.eps = 1e-8;
    nn::Adam<float> opt(model.named_parameters(), ao);
    std::printf("relpos demo: fitting y = sin(3x) * x with a 1-32-1 MLP (%zu parameters), Adam lr 1e-2\n",
                model.num_parameters());
    for (int step = 0; step <= 2000; ++step) {
        opt.zero_grad();
        Var<float> d = model.forward(X) - Y;
        Var<float> loss = mean(d * d);
        loss.backward();
        opt.step(1e-2);
        if (step % 200 == 0) std::printf("  step %4d  mse %.6f\n", step, loss.item());
    }
    return 0;
}
