#include "autodiff/expf_libm.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#if defined(__AVX512F__) && defined(__AVX512VL__)
#include <immintrin.h>
#endif

namespace relpos::vec {

namespace {
// tab[i] = bits(2^(i/32)) - (i << 47): 2^(i/32) rounded to double, with the exponent field cleared of
// i/32's share so that tab[k % 32] + (k << 47) is the bit pattern of 2^(k/32) for any integer k in range.
constexpr std::uint64_t kTab[32] = {
    0x3ff0000000000000, 0x3fefd9b0d3158574, 0x3fefb5586cf9890f, 0x3fef9301d0125b51,
    0x3fef72b83c7d517b, 0x3fef54873168b9aa, 0x3fef387a6e756238, 0x3fef1e9df51fdee1,
    0x3fef06fe0a31b715, 0x3feef1a7373aa9cb, 0x3feedea64c123422, 0x3feece086061892d,
    0x3feebfdad5362a27, 0x3feeb42b569d4f82, 0x3feeab07dd485429, 0x3feea47eb03a5585,
    0x3feea09e667f3bcd, 0x3fee9f75e8ec5f74, 0x3feea11473eb0187, 0x3feea589994cce13,
    0x3feeace5422aa0db, 0x3feeb737b0cdc5e5, 0x3feec49182a3f090, 0x3feed503b23e255d,
    0x3feee89f995ad3ad, 0x3feeff76f2fb5e47, 0x3fef199bdd85529c, 0x3fef3720dcef9069,
    0x3fef5818dcfba487, 0x3fef7c97337b9b5f, 0x3fefa4afa2a490da, 0x3fefd0765b6e4540,
};
constexpr double kInvLn2N = 0x1.71547652b82fep+5;  // 32 / ln 2
constexpr double kShift = 0x1.8p+52;               // adding it rounds to an integer (ties to even)
// 2^(r/32) ~ C0 r^3 + C1 r^2 + C2 r + 1 on |r| <= 1/2
constexpr double kC0 = 0x1.c6af84b912394p-20, kC1 = 0x1.ebfce50fac4f3p-13, kC2 = 0x1.62e42ff0c52d6p-6;
// expf's special ranges: above kOverflow it overflows, below kUnderflow (and at -inf) it is 0, between
// kUnderflow and kMayUnderflow it returns a tiny value of its own; NaN too goes to expf itself.
constexpr float kOverflow = 0x1.62e42ep6f;
constexpr float kUnderflow = -0x1.9fe368p6f;
constexpr float kMayUnderflow = -0x1.9d1d9ep6f;

#if defined(__AVX512F__) && defined(__AVX512VL__)
// The loop below for eight floats at once in AVX-512 registers, the same operations in the same order (the
// same bits); the table lookup as two two-register permutes and a blend instead of a gather (eight scattered
// loads, the slow part of the compiler's vectorisation of that loop).
inline __m256 exp8(__m256 xf) {
    const __m512i t0 = _mm512_loadu_si512(kTab), t1 = _mm512_loadu_si512(kTab + 8);
    const __m512i t2 = _mm512_loadu_si512(kTab + 16), t3 = _mm512_loadu_si512(kTab + 24);
    const __m512d inv_ln2n = _mm512_set1_pd(kInvLn2N), shift = _mm512_set1_pd(kShift);
    const __m512d xd = _mm512_cvtps_pd(xf);
    const __m512d zs = _mm512_fmadd_pd(inv_ln2n, xd, shift);
    const __m512i ki = _mm512_castpd_si512(zs);
    const __m512d kd = _mm512_sub_pd(zs, shift);
    const __m512d r = _mm512_fmsub_pd(inv_ln2n, xd, kd);  // fma(a, b, -c): the same rounding
    const __m512d z = _mm512_fmadd_pd(r, _mm512_set1_pd(kC0), _mm512_set1_pd(kC1));
    const __m512d r2 = _mm512_mul_pd(r, r);
    __m512d p = _mm512_fmadd_pd(r, _mm512_set1_pd(kC2), _mm512_set1_pd(1.0));
    p = _mm512_fmadd_pd(z, r2, p);
    // kTab[ki & 31]: entries 0-15 or 16-31 by bit 4, within each by bits 0-3 (the permutes read those only)
    const __m512i lo = _mm512_permutex2var_epi64(t0, ki, t1);
    const __m512i hi = _mm512_permutex2var_epi64(t2, ki, t3);
    const __m512i t = _mm512_add_epi64(_mm512_mask_blend_epi64(_mm512_test_epi64_mask(ki, _mm512_set1_epi64(16)), lo, hi),
                                       _mm512_slli_epi64(ki, 47));
    return _mm512_cvtpd_ps(_mm512_mul_pd(p, _mm512_castsi512_pd(t)));
}
#endif

inline bool fast_path(float x) { return ((x >= kMayUnderflow) & (x <= kOverflow)) | (x < kUnderflow); }  // branch-free
}  // namespace

void expf_libm(const float* __restrict in, float* __restrict out, std::size_t n) {
    constexpr std::size_t kBlock = 256;
    for (std::size_t b0 = 0; b0 < n; b0 += kBlock) {
        const std::size_t m = std::min(kBlock, n - b0);
        const float* x = in + b0;
        float* y = out + b0;
        int special = 0;
        std::size_t i0 = 0;  // where the loops below start: the AVX-512 loop has done [0, i0)
#if defined(__AVX512F__) && defined(__AVX512VL__)
        {
            const __m256 under = _mm256_set1_ps(kUnderflow), may = _mm256_set1_ps(kMayUnderflow),
                         over = _mm256_set1_ps(kOverflow);
            unsigned slow = 0;  // lanes off the fast path (NaN compares false everywhere: off it too)
            for (; i0 + 8 <= m; i0 += 8) {
                const __m256 xv = _mm256_loadu_ps(x + i0);
                const __mmask8 u = _mm256_cmp_ps_mask(xv, under, _CMP_LT_OQ);
                const __mmask8 fast = (_mm256_cmp_ps_mask(xv, may, _CMP_GE_OQ) & _mm256_cmp_ps_mask(xv, over, _CMP_LE_OQ)) | u;
                slow |= 0xffu & ~unsigned(fast);
                _mm256_storeu_ps(y + i0, _mm256_maskz_mov_ps(__mmask8(~u), exp8(xv)));  // below kUnderflow: 0
            }
            special = int(slow != 0);
        }
#endif
        for (std::size_t i = i0; i < m; ++i) {
            const float xf = x[i];
            const double xd = xf;
            const double zs = std::fma(kInvLn2N, xd, kShift);  // k + shift, k = round(x * 32/ln2)
            std::uint64_t ki;
            std::memcpy(&ki, &zs, sizeof ki);
            const double kd = zs - kShift;
            const double r = std::fma(kInvLn2N, xd, -kd);
            const double z = std::fma(r, kC0, kC1);
            const double r2 = r * r;
            double p = std::fma(r, kC2, 1.0);
            p = std::fma(z, r2, p);
            const std::uint64_t t = kTab[ki & 31] + (ki << 47);
            double s;
            std::memcpy(&s, &t, sizeof s);
            y[i] = static_cast<float>(p * s);
        }
        for (std::size_t i = i0; i < m; ++i) {  // a loop of its own: in the one above it stops the vectoriser
            y[i] = x[i] < kUnderflow ? 0.f : y[i];
            special |= int(!fast_path(x[i]));
        }
        if (special)
            for (std::size_t i = 0; i < m; ++i)
                if (!fast_path(x[i])) y[i] = std::exp(x[i]);
    }
}

ExpfMismatch expf_libm_check(std::size_t samples) {
    ExpfMismatch mm;
    std::vector<float> xs;
    xs.reserve(2 * samples + 16);
    // every part of the bit space (a stride coprime to 2^32), then a denser sweep of the softmax's range
    // [-110, 0] (its inputs are logits minus the row maximum), then the edges
    for (std::size_t k = 0; k < samples; ++k) {
        const std::uint32_t bits = static_cast<std::uint32_t>(k * 2654435761u);
        float f;
        std::memcpy(&f, &bits, sizeof f);
        xs.push_back(f);
    }
    const std::uint32_t lo = 0x80000000u, hi = 0xc2dc0000u;  // -0 .. -110 as bit patterns
    const std::uint64_t span = hi - lo;
    for (std::size_t k = 0; k < samples; ++k) {
        const std::uint32_t bits = lo + static_cast<std::uint32_t>(span * k / std::max<std::size_t>(samples, 1));
        float f;
        std::memcpy(&f, &bits, sizeof f);
        xs.push_back(f);
    }
    for (float f : {0.f, -0.f, kOverflow, kUnderflow, kMayUnderflow, std::nextafter(kUnderflow, 0.f),
                    std::nextafter(kMayUnderflow, -1.f), -87.33654f, 88.f, -88.f, 1e-30f, -1e-30f,
                    std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                    std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::denorm_min()})
        xs.push_back(f);
    std::vector<float> ys(xs.size());
    expf_libm(xs.data(), ys.data(), xs.size());
    for (std::size_t i = 0; i < xs.size(); ++i) {
        const float s = std::exp(xs[i]);
        if (std::memcmp(&s, &ys[i], sizeof s) != 0) {
            mm.found = true;
            mm.x = xs[i];
            mm.vector = ys[i];
            mm.scalar = s;
            return mm;
        }
    }
    return mm;
}

bool use_vector_expf() {
    static const bool ok = !expf_libm_check(1 << 17).found;
    return ok;
}

}  // namespace relpos::vec
