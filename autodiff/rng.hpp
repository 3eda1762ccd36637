// A small, fast, seedable random generator whose whole state can be saved in a checkpoint.
// xoshiro256** (Blackman & Vigna); seeded through splitmix64. Chosen over std::mt19937 because its
// state is 4 words (easy to checkpoint) and dropout draws one number per activation.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>

namespace relpos {

class Rng {
public:
    explicit Rng(std::uint64_t seed = 0) { reseed(seed); }

    void reseed(std::uint64_t seed) {
        std::uint64_t z = seed;
        for (auto& w : s_) w = splitmix(z);
        has_spare_ = false;
    }

    std::uint64_t next_u64() {
        const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
        const std::uint64_t t = s_[1] << 17;
        s_[2] ^= s_[0];
        s_[3] ^= s_[1];
        s_[1] ^= s_[2];
        s_[0] ^= s_[3];
        s_[2] ^= t;
        s_[3] = rotl(s_[3], 45);
        return result;
    }

    std::uint32_t next_u32() { return static_cast<std::uint32_t>(next_u64() >> 32); }

    // Uniform in [0, 1) with 53 random bits.
    double uniform() { return (next_u64() >> 11) * 0x1.0p-53; }
    double uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }

    // Uniform integer in [0, n).
    std::uint64_t below(std::uint64_t n) { return n ? next_u64() % n : 0; }

    double normal() {  // Box-Muller
        if (has_spare_) {
            has_spare_ = false;
            return spare_;
        }
        double u1 = 0;
        do u1 = uniform(); while (u1 <= 0.0);
        double u2 = uniform();
        double r = std::sqrt(-2.0 * std::log(u1));
        spare_ = r * std::sin(6.283185307179586 * u2);
        has_spare_ = true;
        return r * std::cos(6.283185307179586 * u2);
    }

    // Full state (for checkpoints): 4 words + spare flag + spare value bits.
    std::array<std::uint64_t, 6> state() const {
        std::uint64_t spare_bits;
        static_assert(sizeof(spare_bits) == sizeof(spare_), "");
        __builtin_memcpy(&spare_bits, &spare_, sizeof spare_);
        return {s_[0], s_[1], s_[2], s_[3], has_spare_ ? 1u : 0u, spare_bits};
    }
    void set_state(const std::array<std::uint64_t, 6>& st) {
        for (int i = 0; i < 4; ++i) s_[i] = st[i];
        has_spare_ = st[4] != 0;
        __builtin_memcpy(&spare_, &st[5], sizeof spare_);
    }

private:
    static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
    static std::uint64_t splitmix(std::uint64_t& z) {
        std::uint64_t r = (z += 0x9e3779b97f4a7c15ULL);
        r = (r ^ (r >> 30)) * 0xbf58476d1ce4e5b9ULL;
        r = (r ^ (r >> 27)) * 0x94d049bb133111ebULL;
        return r ^ (r >> 31);
    }
    std::uint64_t s_[4];
    bool has_spare_ = false;
    double spare_ = 0;
};

}  // namespace relpos
