#pragma once
// Vectorisable double-precision exp, Φ (the normal distribution function,
// for GELU), sigmoid, tanh, log and log1p.
//
// glibc's std::exp / std::erf / std::log are scalar calls, so a loop such as
//
//     #pragma omp simd
//     for (int64_t i = 0; i < n; ++i) y[i] = 0.5 * x[i] * (1.0 + std::erf(x[i] * M_SQRT1_2));
//
// runs one element at a time. The functions here are header-only, always
// inlined and free of branches: every data-dependent choice (range, special
// value) is a select (`c ? a : b` on values, which GCC turns into a masked
// blend), the integer work is done on 64-bit lanes, and the only libm
// function used is std::fma, which GCC emits as one vfmadd instruction (the
// project compiles with -ffp-contract=off, so every fused step here is an
// explicit std::fma and everything else rounds exactly as written). With
// -march=native on an AVX-512 machine GCC then evaluates 8 doubles per
// instruction inside `#pragma omp simd` loops: 2.5-4.5x faster than the libm
// calls in one thread (GELU's loop with normal_cdf: 2.8 ns per element on
// a Zen 4, against 12.1 ns with std::erf and std::exp).
//
// Keeping it vectorisable: GCC does not if-convert a *conditional*
// floating-point operation, and it will sink a value that only one arm of
// `c ? a : b` uses into that arm, which makes a branch and the loop stays
// scalar. So every select here chooses between values that are computed
// unconditionally anyway, or between constants, and the arithmetic after it
// is unconditional. The project compiles with -fno-trapping-math: under
// GCC's default -ftrapping-math even these selects stay branches on a CPU
// without mask registers (AVX2), and every loop here runs scalar there.
// Check a change with -fopt-info-vec-optimized ("loop vectorized using 64
// byte vectors"; 32 with AVX2) on a `#pragma omp simd` loop that calls it.
//
// Accuracy, measured by tests/engine/test_vmath.cpp against long double
// references (and glibc): exp within 0.87 ulp (relative error <= 1.4e-16),
// normal_cdf within 7 ulp of Φ (1.2 for x >= 0), log within 0.84 ulp,
// sigmoid within ~2 ulp, tanh and log1p within ~1.5 ulp (bounds in the
// tests); glibc is within 0.5-1.2 ulp on the same points. The
// results are deterministic (the same bits for the same input, whatever the
// vector width or thread count; a test checks SIMD against scalar calls) but
// not always bitwise equal to glibc's.
//
// Special values: exp(+inf) = +inf, exp(-inf) = 0, overflow to +inf above
// ln(DBL_MAX) ≈ 709.78, gradual underflow through the subnormals down to 0
// below ≈ -745.13; normal_cdf(+inf) = 1, normal_cdf(-inf) = 0; sigmoid(±inf) = 1, 0;
// tanh(±0) = ±0, tanh(±inf) = ±1; log(±0) = -inf, log(+inf) = +inf,
// log(x < 0) = NaN; log1p(-1) = -inf, log1p(+inf) = +inf, log1p(x < -1) =
// NaN; NaN in gives NaN out
// everywhere. Floating-point exception flags are not meant to be meaningful
// (lanes that are computed and then discarded may raise them).
//
// Sources: W. J. Cody and W. Waite, "Software Manual for the Elementary
// Functions" (1980) for the range reduction and tanh; W. J. Cody, "Rational Chebyshev
// approximations for the error function", Math. Comp. 23 (1969) 631-638, and
// his netlib routine specfun/CALERF (1990) for erfc's coefficients; Sun's
// fdlibm s_erf.c, e_exp.c and e_log.c for erf's coefficients near 0, the
// ln 2 split and the log method and coefficients (fdlibm: Copyright (C) 1993
// by Sun Microsystems, Inc. All rights reserved. Developed at SunPro, a Sun
// Microsystems, Inc. business. Permission to use, copy, modify, and
// distribute this software is freely granted, provided that this notice is
// preserved.) The code here is written from those descriptions; only the
// published coefficients are taken over.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#if defined(__GNUC__)
#define AG_VMATH_INLINE inline __attribute__((always_inline))
#else
#define AG_VMATH_INLINE inline
#endif

namespace ag::vmath {

namespace detail {

// Bit casts (C++17 has no std::bit_cast; memcpy compiles to a register move).
AG_VMATH_INLINE std::uint64_t to_bits(double d) {
    std::uint64_t u;
    std::memcpy(&u, &d, sizeof u);
    return u;
}
AG_VMATH_INLINE double from_bits(std::uint64_t u) {
    double d;
    std::memcpy(&d, &u, sizeof d);
    return d;
}

// 2^k for -1022 <= k <= 1023: the biased exponent k + 1023 in bits 52..62,
// a zero mantissa.
AG_VMATH_INLINE double pow2(std::int64_t k) { return from_bits(static_cast<std::uint64_t>(k + 1023) << 52); }

// Round-to-nearest-integer without a libm call: adding 1.5·2^52 pushes the
// fraction bits out of the mantissa (the FPU rounds to nearest, ties to
// even), and the integer then sits in the low bits of the sum:
//   bits(v + 1.5·2^52) = bits(1.5·2^52) + round(v)   for |v| < 2^51.
constexpr double kShifter = 0x1.8p52;

}  // namespace detail

// ---------------------------------------------------------------------------
// exp
// ---------------------------------------------------------------------------
//
// 1. Range reduction (Cody & Waite). Write x = k·ln2 + r with k = round(x/ln2)
//    and |r| <= ln2/2 ≈ 0.347, so that e^x = 2^k · e^r. r is computed as
//      r = (x - k·ln2_hi) - k·ln2_lo
//    where ln2_hi holds the leading 32 bits of ln 2 (its low 21 mantissa bits
//    are zero) and ln2_lo ≈ ln2 - ln2_hi. For |k| <= 1076 the product
//    k·ln2_hi needs at most 43 bits, so it is exact, and x - k·ln2_hi is exact
//    too (the two are within a factor 2 of each other, or k = 0). Only the
//    last step rounds: r is within half an ulp of x - k·ln2 (|error| <= 2^-55,
//    plus |k|·|ln2 - ln2_hi - ln2_lo| < 1076·2^-86, which is nothing). The
//    pair (ln2_hi, ln2_lo) is fdlibm's.
//
// 2. e^r on |r| <= 0.3466 by its Taylor polynomial of degree 13, coefficients
//    1/n!: the first omitted term is 0.3466^14/14! ≈ 4e-18 (relative to
//    e^r >= 0.707: 6e-18, under 0.03 ulp). Horner's rule with one FMA per
//    step; the last step 1 + r·q rounds once (0.5 ulp), the earlier rounding
//    errors reach the result scaled by |r| <= 0.35 (< 0.2 ulp), and r's own
//    rounding adds up to 2^-55 relative (0.25 ulp when e^r < 1). Measured:
//    within 0.87 ulp of e^x. (A minimax polynomial would save two FMAs; the
//    Taylor one needs no table of magic numbers and is as accurate.)
//
// 3. Scale by 2^k by building the double from bits. k ranges over
//    [-1076, 1024] after the clamp below, outside the normal exponents
//    [-1022, 1023], so the scale is applied as two factors 2^k1·2^(k-k1),
//    k1 = floor(k/2), both normal: e^r·2^k1 is exact, and the second product
//    rounds once, which gives +inf past ln(DBL_MAX) ≈ 709.78, subnormal
//    results below ≈ -708.40 (within one unit of 2^-1074 of glibc's) and 0
//    below ≈ -745.13 — no special cases.
//
// Edges, as selects: x is clamped to [-746, 710] first (e^710 already
// overflows and e^-746 already underflows to 0, so this changes no result but
// keeps k in range); +inf and -inf go through the clamp; a NaN fails both
// comparisons, stays NaN and propagates through the arithmetic (the integer
// garbage its bits make of k is multiplied by NaN).
AG_VMATH_INLINE double exp(double x) {
    constexpr double kLog2e = 1.44269504088896338700e+00;  // 1/ln 2
    constexpr double kLn2Hi = 6.93147180369123816490e-01;  // 0x3fe62e42fee00000
    constexpr double kLn2Lo = 1.90821492927058770002e-10;  // 0x3dea39ef35793c76
    // 1/n!, n = 2 … 13.
    constexpr double c2 = 1.0 / 2, c3 = 1.0 / 6, c4 = 1.0 / 24, c5 = 1.0 / 120, c6 = 1.0 / 720, c7 = 1.0 / 5040,
                     c8 = 1.0 / 40320, c9 = 1.0 / 362880, c10 = 1.0 / 3628800, c11 = 1.0 / 39916800,
                     c12 = 1.0 / 479001600, c13 = 1.0 / 6227020800;

    // Both tests read x itself (not the first clamp's result), so the two
    // compares are independent and the clamp adds one step, not two, to
    // the chain of operations every result waits for.
    const double xc = x > 710.0 ? 710.0 : (x < -746.0 ? -746.0 : x);

    // k = round(x/ln2), as a double (kd) and as an integer (k).
    const double t = xc * kLog2e + detail::kShifter;
    const double kd = t - detail::kShifter;
    const auto k = static_cast<std::int64_t>(detail::to_bits(t) - detail::to_bits(detail::kShifter));

    const double r = std::fma(-kd, kLn2Lo, xc - kd * kLn2Hi);

    // e^r = 1 + r·(1 + r/2! + r²/3! + … + r^12/13!).
    double q = c13;
    q = std::fma(q, r, c12);
    q = std::fma(q, r, c11);
    q = std::fma(q, r, c10);
    q = std::fma(q, r, c9);
    q = std::fma(q, r, c8);
    q = std::fma(q, r, c7);
    q = std::fma(q, r, c6);
    q = std::fma(q, r, c5);
    q = std::fma(q, r, c4);
    q = std::fma(q, r, c3);
    q = std::fma(q, r, c2);
    q = std::fma(q, r, 1.0);
    const double er = std::fma(q, r, 1.0);

    // k = k1 + (k - k1) with k1 = floor(k/2): |k1|, |k - k1| <= 538. (Right
    // shift of a negative integer is arithmetic in GCC and Clang, and in
    // C++20; it saves the sign fix-up of k / 2.)
    const std::int64_t k1 = k >> 1;
    return er * detail::pow2(k1) * detail::pow2(k - k1);
}

// ---------------------------------------------------------------------------
// normal_cdf: Φ(x), the standard normal distribution function, for GELU
// ---------------------------------------------------------------------------
//
// Φ(x) = ½ erfc(-x/√2) = ½ (1 + erf(x/√2)). GELU (§3.2) needs Φ and the
// density φ(x) = e^(-x²/2)/√(2π) together, so normal_cdf(x, gauss) also
// returns gauss = e^(-x²/2). With a = |x|/√2, two intervals, each with a
// rational approximation whose own error is far below double rounding:
//
//   I1  a <= 0.84375:  erf(a)  = a + a·R1(a²),  R1 = PP/QQ             (fdlibm)
//                      Φ(x) = ½ ± ½ erf(a)
//   I2  a > 0.84375:   erfc(a) = e^(-a²)·C(a)/D(a)                     (Cody)
//                      Φ(x) = 1 - ½ erfc(a) for x > 0,  ½ erfc(a) for x < 0
//
// I1 is from fdlibm's s_erf.c (Sun, 1993; the same polynomial is in glibc,
// musl and the BSDs). On I1, (erf(a) - a)/a = 2/√π - 1 + O(a²) lies in
// [-0.091, 0.128], so the rounding errors of PP/QQ (a few ulp of R1) are
// scaled down ~8x in a + a·R1, which one FMA rounds once; |R1 - (erf(a)-a)/a|
// <= 1.6e-17.
//
// I2 is W. J. Cody's near-minimax approximation C/D of erfc(a)·e^(a²)
// ("Rational Chebyshev approximations for the error function", Math. Comp.
// 23 (1969) 631-638; coefficients of his netlib routine specfun/CALERF,
// 1990), fitted on [0.46875, 4] to a relative error of 1.2e-18. Beyond 4
// Cody switches to an asymptotic form in 1/a², which a third interval would
// cost here; instead C/D is used up to a = 6 (extrapolated, within 7e-13
// relative) and frozen at a = 6 beyond (erfc(a) overestimated by at most
// a/6). For x > 0 this changes nothing: erfc < 1.6e-8 from a = 4 on, and
// Φ = 1 - ½ erfc rounds to 1 from a = 5.93. For x < 0 it means that Φ is
// accurate to a few ulp of its own value down to x = -4√2 (Φ = 7.8e-9), and
// below that to 1e-19 absolute: what GELU's x·Φ(x) needs, at least 1000 times
// smaller than the textbook form's 1.1e-16. (fdlibm and glibc's erf have a third
// interval, 0.84375 < a <= 1.25, because 1 - erfc loses up to two bits of
// erf there; Φ = 1 - ½ erfc lies in [0.80, 1] and loses less than an ulp.)
//
// Why not ½(1 + erf(x/√2)), the textbook form: for x < 0 it subtracts two
// numbers near 1, so Φ(-5) = 2.9e-7 would keep only its first ten digits;
// and the rounding of x/√2 would be amplified 2a² times by e^(-a²). Here the
// tail ½ erfc(a) is computed directly, and e^(-a²) = e^(-x²/2) from x itself:
// x² = h + l exactly (h = fl(x·x), l = fma(x, x, -h), |l| <= 2^-43 for
// |x| <= 38.7), and e^(-x²/2) = e^(-h/2)·(1 - l/2) to within l²/8 < 2^-89
// (h/2 and l/2 are exact). Beyond |x| = 38.61, e^(-x²/2) underflows to 0.
//
// Branch-free evaluation. Both rational functions are evaluated, each at a
// clamped into its own interval (so that no lane meets an overflow, a NaN
// or a subnormal for a result it will throw away), and the numerator and
// denominator of the right one are selected *before* dividing, so that one
// division is done instead of two (a vector division costs several FMAs).
// Every choice between the intervals is made before that division, too:
// with one of them after it (Φ from ½ erf or from ½ erfc), GCC duplicated
// the division into both paths of the first choice and did two. So the
// last steps are one form for all four cases,
//   Φ = base + sign·½·fma(p, ratio, q),
// with p = q = a for I1 (½ erf(a) = ½(a + a·R1)) and p = e^(-a²), q = 0 for
// I2; base, sign = ½, +1 (I1, x >= 0), ½, -1 (I1, x < 0), 1, -1 (I2, x > 0)
// and 0, +1 (I2, x < 0): the same roundings as writing each case out.
//
// Order. e^(-x²/2) is the longest chain of dependent operations (the exp's
// 13-step Horner), so it comes first and the rationals run beside it (3.0 →
// 2.87 ns an element). Past that the loop is bound by how many operations
// it has, not by chains: the exp by Estrin's scheme (a chain of 5 instead
// of 13, more FMAs) changed nothing, and leaving the exp out saves just the
// exp's own time (2.8 → 1.8 ns; the exp alone: 1.0). Together with the
// single division: 3.2 → 2.8 ns an element (GELU's forward loop, Zen 4),
// every result the same.
//
// Measured (tests/engine/test_vmath.cpp, against long double erfcl): Φ
// within 1.2 ulp for x >= 0 (the textbook form with glibc's erf: 1.14) and
// within 7 ulp for -4√2 <= x < 0 (the textbook form: up to 10^7 ulp), 5e-20
// absolute below; gauss within 1.4 ulp of e^(-x²/2).
AG_VMATH_INLINE double normal_cdf(double x, double& gauss) {
    // fdlibm, I1: R1(z) = PP(z)/QQ(z), PP = pp0 + … + pp4 z⁴, QQ = 1 + qq1 z + … + qq5 z⁵.
    constexpr double pp0 = 1.28379167095512558561e-01, pp1 = -3.25042107247001499370e-01,
                     pp2 = -2.84817495755985104766e-02, pp3 = -5.77027029648944159157e-03,
                     pp4 = -2.37630166566501626084e-05;
    constexpr double qq1 = 3.97917223959155352819e-01, qq2 = 6.50222499887672944485e-02,
                     qq3 = 5.08130628187576562776e-03, qq4 = 1.32494738004321644526e-04,
                     qq5 = -3.96022827877536812320e-06;
    // Cody, I2, in CALERF's order (C(1..9), D(1..8) there; 0-based here):
    // C(a) = c8 a^8 + c0 a^7 + c1 a^6 + … + c6 a + c7, D(a) = a^8 + d0 a^7 + … + d6 a + d7.
    constexpr double c0 = 5.64188496988670089e-01, c1 = 8.88314979438837594e+00, c2 = 6.61191906371416295e+01,
                     c3 = 2.98635138197400131e+02, c4 = 8.81952221241769090e+02, c5 = 1.71204761263407058e+03,
                     c6 = 2.05107837782607147e+03, c7 = 1.23033935479799725e+03, c8 = 2.15311535474403846e-08;
    constexpr double d0 = 1.57449261107098347e+01, d1 = 1.17693950891312499e+02, d2 = 5.37181101862009858e+02,
                     d3 = 1.62138957456669019e+03, d4 = 3.29079923573345963e+03, d5 = 4.36261909014324716e+03,
                     d6 = 3.43936767414372164e+03, d7 = 1.23033935480374942e+03;

    const double ax = std::fabs(x), a = ax * M_SQRT1_2;
    // A NaN fails every comparison below: it is not in I1, passes every
    // clamp unchanged and makes e, the I2 rational and so the result NaN.

    // e^(-x²/2) from the exact split x² = h + l, at |x| clamped to 38.7
    // (e^(-38.7²/2) = e^(-748.8) already underflows to 0, the correctly
    // rounded result for every larger |x|).
    const double x_e = ax > 38.7 ? 38.7 : ax;
    const double h = x_e * x_e;
    const double l = std::fma(x_e, x_e, -h);
    const double eh = exp(-0.5 * h);
    const double e = std::fma(-eh, 0.5 * l, eh);
    gauss = e;

    // I1 at a_1 = min(a, 0.84375), chosen by the same test as the interval.
    const bool in1 = a <= 0.84375, neg = x < 0;
    const double a_1 = in1 ? a : 0.84375;
    const double z1 = a_1 * a_1;
    const double num1 = std::fma(std::fma(std::fma(std::fma(pp4, z1, pp3), z1, pp2), z1, pp1), z1, pp0);
    const double den1 =
        std::fma(std::fma(std::fma(std::fma(std::fma(qq5, z1, qq4), z1, qq3), z1, qq2), z1, qq1), z1, 1.0);

    // I2 at a_2 = clamp(a, 0.84375, 6).
    const double a_2 = in1 ? 0.84375 : (a > 6.0 ? 6.0 : a);
    double num2 = std::fma(c8, a_2, c0);
    num2 = std::fma(num2, a_2, c1);
    num2 = std::fma(num2, a_2, c2);
    num2 = std::fma(num2, a_2, c3);
    num2 = std::fma(num2, a_2, c4);
    num2 = std::fma(num2, a_2, c5);
    num2 = std::fma(num2, a_2, c6);
    num2 = std::fma(num2, a_2, c7);
    double den2 = a_2 + d0;
    den2 = std::fma(den2, a_2, d1);
    den2 = std::fma(den2, a_2, d2);
    den2 = std::fma(den2, a_2, d3);
    den2 = std::fma(den2, a_2, d4);
    den2 = std::fma(den2, a_2, d5);
    den2 = std::fma(den2, a_2, d6);
    den2 = std::fma(den2, a_2, d7);

    const double num = in1 ? num1 : num2, den = in1 ? den1 : den2;
    const double p = in1 ? a : e, q = in1 ? a : 0.0;
    const double base = in1 ? 0.5 : (neg ? 0.0 : 1.0);
    // (A product of two selects: `in1 != neg ? 1.0 : -1.0` made GCC combine
    // the masks outside the vector registers, 6 % slower.)
    const double sign = (in1 ? 1.0 : -1.0) * (neg ? -1.0 : 1.0);
    const double half = 0.5 * std::fma(p, num / den, q);  // ½ erf(a) (I1) or ½ erfc(a) (I2)
    return std::fma(sign, half, base);
}

// ---------------------------------------------------------------------------
// sigmoid
// ---------------------------------------------------------------------------
//
// σ(x) = 1/(1 + e^-x) = e^x/(1 + e^x). With e = e^-|x| <= 1 for both signs
// nothing overflows (for x < -709.78, 1/(1 + e^-x) would be 1/inf = 0
// instead of ≈ e^x):
//   x >= 0: 1/(1 + e),   x < 0: e/(1 + e).
// The same two formulas as the scalar sigmoid in ops/pointwise.cpp, as a
// select. σ(±inf) = 1, 0; NaN gives NaN. Within ~2 ulp (exp's error plus
// two roundings).
AG_VMATH_INLINE double sigmoid(double x) {
    const double e = exp(-std::fabs(x));
    return (x >= 0.0 ? 1.0 : e) / (1.0 + e);
}

// ---------------------------------------------------------------------------
// tanh
// ---------------------------------------------------------------------------
//
// Cody & Waite's method (chapter 13 of their manual), on f = |x| with the
// sign of x copied at the end (tanh is odd; tanh(-0) = -0):
//
//   f > ln(3)/2 ≈ 0.549:  tanh f = 1 - 2/(e^(2f) + 1), computed as
//                         2·(1/2 - 1/(e^(2f) + 1)) (the doubling is exact).
//                         Here tanh f > 1/2, so the subtraction cancels
//                         nothing; exp's error and three roundings remain.
//                         For f > ~19 the fraction is below half an ulp of
//                         1 and the result rounds to 1; e^(2f) overflows to
//                         +inf past f ≈ 355 and gives exactly 1 too.
//   f <= ln(3)/2:         tanh f = f + f·R(g), g = f², with R = g·P(g)/Q(g)
//                         their rational approximation of (tanh f - f)/f
//                         for 49-60 bit mantissas (P of degree 2, Q monic of
//                         degree 3). |R| <= 0.09 there, so its rounding
//                         errors reach the result scaled down >= 10x.
//
// Both sides are computed for every lane and one is selected (the top of
// this file), before the one division they share; f = NaN fails
// f > ln(3)/2 and propagates through the second.
AG_VMATH_INLINE double tanh(double x) {
    constexpr double kHalfLn3 = 0.54930614433405484570;
    constexpr double P0 = -0.16134119023996228053e+4, P1 = -0.99225929672236083313e+2, P2 = -0.96437492777225469787e+0;
    constexpr double Q0 = 0.48402357071988688686e+4, Q1 = 0.22337720718962312926e+4, Q2 = 0.11274474380534949335e+3;
    const double f = std::fabs(x);
    const bool large = f > kHalfLn3;
    const double g = f * f;
    // The quotient d = 1/(e^(2f) + 1) or R = g·P/Q, then one form for both,
    // fma(p, d, q): 1 - 2d, which rounds as 2·(1/2 - d) does (the doubling
    // is exact), or f + f·R. (1.64 → 1.58 ns an element against two
    // divisions and a select after them, Zen 4.)
    const double num = large ? 1.0 : g * std::fma(std::fma(P2, g, P1), g, P0);
    const double den = large ? exp(f + f) + 1.0 : std::fma(std::fma(g + Q2, g, Q1), g, Q0);
    const double p = large ? -2.0 : f, q = large ? 1.0 : f;
    return std::copysign(std::fma(p, num / den, q), x);
}

// ---------------------------------------------------------------------------
// log
// ---------------------------------------------------------------------------
//
// fdlibm's e_log.c, with its branches turned into selects.
// 1. Reduction: x = 2^k·m with m in [√2/2, √2), so log x = k·ln2 + log m and
//    f = m - 1 is in [-0.293, 0.414]. Subnormal x are first multiplied by
//    2^54 (and k lowered by 54).
// 2. log(1+f) = log((1+s)/(1-s)) with s = f/(2+f), |s| <= 0.1716:
//      log(1+f) = 2s + 2s³/3 + 2s⁵/5 + … = 2s + s·R(s²),
//    where R(z) = Lg1 z + … + Lg7 z^7 is a Remez polynomial with
//    |2s + s·R(s²) - log(1+f)| <= 2^-58.45 (fdlibm's coefficients and bound).
//    To keep the rounding error small, fdlibm rewrites 2s with hfsq = f²/2:
//    from s·(2 + f) = f, 2s = f - s·f = f - hfsq + s·hfsq, so
//      log(1+f) = f - (hfsq - s·(hfsq + R)),
//    where f is exact and the rest is a small correction.
// 3. log x = k·ln2_hi - ((hfsq - (s·(hfsq + R) + k·ln2_lo)) - f), with the
//    exact product k·ln2_hi (ln2_hi has 32 bits, |k| <= 1075). Error < 1 ulp
//    (fdlibm's claim; measured: 0.84 ulp).
// Special values as selects: log(+0) = log(-0) = -inf, log(x < 0) = NaN,
// log(+inf) = +inf, log(NaN) = NaN.
AG_VMATH_INLINE double log(double x) {
    constexpr double kLn2Hi = 6.93147180369123816490e-01;  // 0x3fe62e42fee00000
    constexpr double kLn2Lo = 1.90821492927058770002e-10;  // 0x3dea39ef35793c76
    constexpr double Lg1 = 6.666666666666735130e-01, Lg2 = 3.999999999940941908e-01, Lg3 = 2.857142874366239149e-01,
                     Lg4 = 2.222219843214978396e-01, Lg5 = 1.818357216161805012e-01, Lg6 = 1.531383769920937332e-01,
                     Lg7 = 1.479819860511658591e-01;
    constexpr double kTwo54 = 0x1p54;
    constexpr double kInf = std::numeric_limits<double>::infinity();

    // Subnormals: scale into the normal range (x·2^54 is exact). Written as
    // a multiplication by a selected constant, not `tiny ? x * 2^54 : x`,
    // which GCC would turn into a branch (see the top of this file).
    const bool tiny = x < 0x1p-1022;
    const double xs = x * (tiny ? kTwo54 : 1.0);
    const std::int64_t k_adjust = tiny ? 54 : 0;

    // Split xs = 2^k·m with m in [√2/2, √2) (fdlibm's trick, on the high
    // 32 bits): 0x6a09e are the top 20 mantissa bits of √2, so adding
    // 0x95f62 = 0x100000 - 0x6a09e carries into the exponent exactly when
    // the mantissa is >= √2's; adding 0x3fe6a09e (the high word of √2/2) to
    // the low 20 bits then gives m the exponent 0 (m in [1, √2)) or -1 (m in
    // [√2/2, 1)).
    const std::uint64_t bits = detail::to_bits(xs);
    const std::uint64_t hi = (bits >> 32) + 0x95f62u;
    const std::int64_t k = static_cast<std::int64_t>(hi >> 20) - 1023 - k_adjust;
    const std::uint64_t m_hi = (hi & 0x000fffffu) + 0x3fe6a09eu;
    const double m = detail::from_bits((m_hi << 32) | (bits & 0xffffffffu));
    const double f = m - 1.0;

    const double s = f / (2.0 + f);
    const double z = s * s;
    const double w = z * z;
    const double t1 = w * std::fma(std::fma(Lg6, w, Lg4), w, Lg2);
    const double t2 = z * std::fma(std::fma(std::fma(Lg7, w, Lg5), w, Lg3), w, Lg1);
    const double R = t2 + t1;
    const double hfsq = 0.5 * f * f;
    const double dk = static_cast<double>(k);
    const double y = dk * kLn2Hi - ((hfsq - std::fma(s, hfsq + R, dk * kLn2Lo)) - f);

    // Special values. For x = ±0, +inf, x < 0 or NaN the reduction above
    // (which works on the bits) produces a finite garbage y, so adding -inf,
    // +inf, NaN or x itself respectively gives the right answer, and adding 0
    // leaves every other y unchanged.
    double fix = x == kInf ? kInf : 0.0;
    fix = x == 0.0 ? -kInf : fix;
    fix = x < 0.0 ? std::numeric_limits<double>::quiet_NaN() : fix;
    fix = x != x ? x : fix;
    return y + fix;
}

// ---------------------------------------------------------------------------
// log1p
// ---------------------------------------------------------------------------
//
// log(1 + x) for small x, where log(fl(1 + x)) would lose x's low bits:
// with u = fl(1 + x), u's rounding error is e = (u - 1) - x (for |x| < 1
// both subtractions are exact, by Sterbenz's lemma; for larger x, e is
// negligible beside log u anyway), and log(1 + x) = log(u - e) ≈ log u - e/u
// to first order (|e/u| <= 2^-53: the dropped e²/2u² is far below an ulp). So
//   log1p x = log u - ((u - 1) - x)/u,
// which is x itself when u rounds to 1 (log 1 = 0, e = -x), and log u for
// large x, where e is negligible. Within ~1.5 ulp (log's error plus the
// correction's roundings). Edges: u = 0 (x = -1) and u = +inf would make
// the correction 0/0 or inf/inf, so it is set to 0 there and log gives
// -inf and +inf; x < -1 makes u < 0 and log NaN; NaN propagates.
AG_VMATH_INLINE double log1p(double x) {
    constexpr double kInf = std::numeric_limits<double>::infinity();
    const double u = 1.0 + x;
    const double correction = ((u - 1.0) - x) / u;
    return log(u) - (u == 0.0 || u == kInf ? 0.0 : correction);
}

}  // namespace ag::vmath

#undef AG_VMATH_INLINE
