// Exercise 2 · RoPE's range of speeds (lecture §4.5; §10 exercise 2)
//
// RoPE turns pair i of a head vector (d dimensions, d/2 pairs) by m·θ_i at
// position m, with θ_i = base^(-2(i-1)/d), i = 1 … d/2. The first pair is
// the fastest (θ_1 = 1 radian per position), the last the slowest.
//
// Write rope_thetas(d, base) and period(θ) (ex02_rope_frequencies.h).
// Then answer: for d = 128 and base 10,000, how fast do the fastest and
// the slowest pair turn, and what are their periods in positions? Llama 3
// raises the base to 500,000: what is the slowest period then, and why do
// long-context models want it?
//
// d is even (d/2 pairs; d = 2 is a single pair). Return the d/2 speeds in
// the order of i, the fastest first.
//
// Graded: the lecture's θ_1 = 1 (period 2π) and slowest θ ≈ 1.15e-4 with
// a period ≈ 54,410 positions for d = 128, base 10,000, and ≈ 2.56 million
// with base 500,000; d = 2 and d = 4; the reference for many d (up to 256)
// and bases, every θ to 1e-12 of its own size (the slow ones are tiny), each
// slower than the one before; period() on fast and very slow θ. A known
// wrong turn (d values instead of d/2, -2(i-1)/d computed in integers, -(i-1)/d,
// -2i/d (θ_1 not 1), slowest first, a positive exponent, the slowest pair at exactly
// 1/base, -4(i-1)/d, 2π·base^(-2(i-1)/d), float precision; a period of 1/θ, π/θ or
// θ/2π, rounded to whole positions or with π rounded) is named in the
// message.
#include "exercises/ex02_rope_frequencies.h"

#include <cmath>

#include "exercises/not_implemented.h"

namespace ex02 {

std::vector<double> rope_thetas(int64_t d, double base) {
    // TODO: d/2 values, the fastest first
    (void)d, (void)base;
    throw exercises::not_implemented("ex02 rope_frequencies: rope_thetas");
}

double period(double theta) {
    // TODO
    (void)theta;
    throw exercises::not_implemented("ex02 rope_frequencies: period");
}

}  // namespace ex02
