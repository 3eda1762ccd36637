// `sinusoidal`: Vaswani et al. (2017) 3.5, added to the embeddings, any length.
//   PE(pos, 2i) = sin(pos / base^(2i/d)),  PE(pos, 2i+1) = cos(pos / base^(2i/d))
#include <cmath>

#include "nn/position.hpp"

namespace relpos::nn {

template <class T>
class SinusoidalPosition : public PositionEncoding<T> {
public:
    SinusoidalPosition(Options& o, const PositionContext& c)
        : d_(c.d_model), base_(o.get_double("base", 10000.0, 2.0, 1e9)) {}

    Var<T> embed(const Var<T>& x, std::size_t offset) override {
        const std::size_t L = x.dim(1);
        Array<T> pe = uninit<T>({L, d_});  // (L, D), a constant
        for (std::size_t p = 0; p < L; ++p)
            for (std::size_t i = 0; i < d_; i += 2) {
                const double angle = double(this->map_->at(offset + p)) / std::pow(base_, double(i) / double(d_));
                pe(p, i) = T(std::sin(angle));
                if (i + 1 < d_) pe(p, i + 1) = T(std::cos(angle));
            }
        return x + Var<T>(std::move(pe));
    }

private:
    std::size_t d_;
    double base_;
};

void register_sinusoidal(PositionRegistry& r) {
    r.add(position_entry<SinusoidalPosition>("sinusoidal", "fixed sine/cosine absolute positions added to the embeddings (Vaswani et al. 2017)"));
}

}  // namespace relpos::nn
