// exp over a float array, bit for bit what the C library's scalar expf returns on this machine, in
// loops the compiler vectorises.
//
// Why: the attention softmax's exps were scalar libm calls. Its results must not change (a training
// run's numbers depend on every rounding, and the converged campaign spans many binaries), so a
// vector exp with other roundings (xsimd's, as the cross-entropy uses) would not do. glibc's expf
// (2.28 and later, the algorithm of Szabolcs Nagy / Arm's optimized-routines) evaluates in double:
//   z = x * 32/ln2,  k = round(z),  r = z - k,  2^(k/32) from a 32-entry table scaled by 2^(k div 32),
//   exp(x) = 2^(k/32) * (C0 r^3 + C1 r^2 + C2 r + 1), rounded once to float;
// x86-64 runs the variant compiled with FMA contraction (__expf_fma) on CPUs with FMA and AVX2.
// expf_libm() is that computation with the same fused operations in the same order (std::fma: exact
// on any CPU, one instruction with FMA), the special ranges (overflow, underflow, NaN) left to expf.
//
// Another C library or variant would round differently, so use_vector_expf() compares the two on
// every float the softmax can meet in a few hundred thousand samples the first time it is asked, and
// the callers take the scalar loop when they differ. tests: expf_libm/*.
#pragma once

#include <cstddef>

namespace relpos::vec {

// out[i] = expf(in[i]) for i < n, bit-identical to std::exp(float) where use_vector_expf() holds.
// in and out must not overlap (the loops are compiled for distinct arrays).
void expf_libm(const float* in, float* out, std::size_t n);

// Whether expf_libm reproduces std::exp(float) here (checked once, on first call).
bool use_vector_expf();

// The first float x (in an order spread over the whole range) where expf_libm and std::exp differ
// among `samples` checked values, or none: the check behind use_vector_expf, for the tests.
struct ExpfMismatch {
    bool found = false;
    float x = 0, vector = 0, scalar = 0;
};
ExpfMismatch expf_libm_check(std::size_t samples);

}  // namespace relpos::vec
