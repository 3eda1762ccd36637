// `none`: no position information at all (the bag-of-words baseline).
#include "nn/position.hpp"

namespace relpos::nn {

template <class T>
class NoPosition : public PositionEncoding<T> {
public:
    NoPosition(Options&, const PositionContext&) {}
    bool adds_nothing() const override { return true; }
    bool reads_positions() const override { return false; }
};

void register_none(PositionRegistry& r) {
    r.add(position_entry<NoPosition>("none", "no position information (attention is permutation-invariant)"));
}

}  // namespace relpos::nn
