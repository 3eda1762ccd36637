// `learned`: a trained absolute position table (Gehring et al. 2017; BERT), added to the embeddings.
// Positions beyond max_len have no embedding: a longer input is an error naming both lengths.
#include <cmath>

#include <fmt/format.h>

#include "nn/position.hpp"

namespace relpos::nn {

template <class T>
class LearnedPosition : public PositionEncoding<T> {
public:
    LearnedPosition(Options& o, const PositionContext& c)
        : max_len_(static_cast<std::size_t>(o.get_int("max_len", 256, 1, 1 << 20))) {
        weight = this->register_parameter(
            "weight", normal_init<T>({max_len_, c.d_model}, 1.0 / std::sqrt(double(c.d_model)), *c.init_rng));
    }

    Var<T> embed(const Var<T>& x, std::size_t offset) override {
        const std::size_t L = x.dim(1);
        if (offset + L > max_len_)
            throw std::length_error(fmt::format(
                "learned position encoding: a sequence of length {} exceeds max_len {} (raise model.position.max_len)",
                offset + L, max_len_));
        if (this->map_->identity()) return x + slice(weight, 0, offset, offset + L);  // (L, D) broadcast over the batch
        // Randomized positions: the rows of the drawn positions, gathered (differentiably) from the table.
        std::vector<std::int32_t> rows(L);
        for (std::size_t p = 0; p < L; ++p) {
            const std::size_t at = this->map_->at(offset + p);
            if (at >= max_len_)
                throw std::length_error(fmt::format("learned position encoding: position {} is beyond max_len {}", at, max_len_));
            rows[p] = static_cast<std::int32_t>(at);
        }
        return x + embedding(weight, rows, {L});
    }
    std::size_t max_length() const override { return max_len_; }

    Var<T> weight;  // (max_len, D)

private:
    std::size_t max_len_;
};

void register_learned(PositionRegistry& r) {
    r.add(position_entry<LearnedPosition>("learned", "trained absolute position embeddings up to max_len, added to the embeddings"));
}

}  // namespace relpos::nn
