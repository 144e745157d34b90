// ag::vmath (autograd/kernels/vmath.h): exp, normal_cdf, sigmoid, tanh, log and
// log1p against glibc (std::exp, …) and against long double references (x87 80-bit on
// x86-64, 11 more bits than double), on dense sweeps, seeded random points
// and the places where the algorithms switch (range-reduction ties, Φ's
// interval boundaries, the subnormal range), plus special values, and the
// same bits from a SIMD loop as from a scalar call.
//
// Each accuracy test records the worst error and the x where it occurs; run
// `engine_tests "[vmath]" -s` to see them.
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include "catch.h"

#include "autograd/kernels/vmath.h"

namespace {

namespace vmath = ag::vmath;

const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();
// The long double references are only more accurate than double where long
// double is wider (x87 extended on x86-64: 64-bit mantissa).
const bool kWideLongDouble = std::numeric_limits<long double>::digits >= 64;

std::uint64_t bits(double d) {
    std::uint64_t u;
    std::memcpy(&u, &d, sizeof u);
    return u;
}

// The largest error seen and where. A NaN error counts as the worst.
struct Worst {
    double err = 0.0;
    double at = kNaN;
    void add(double e, double x) {
        if (!(e <= err)) {
            err = e;
            at = x;
        }
    }
    std::string str(const char* what) const { return fmt::format("worst {} {:.3g} at x = {:.17g}", what, err, at); }
};

// |v - ref| in units in the last place of ref rounded to double (the gap
// above |ref|; 2^-1074 for subnormals).
double ulps(double v, long double ref) {
    const double r = std::fabs(static_cast<double>(ref));
    const double ulp = std::nextafter(r, kInf) - r;
    return static_cast<double>(std::fabs(static_cast<long double>(v) - ref) / ulp);
}

double rel(double v, double ref) { return std::fabs(v - ref) / std::fabs(ref); }

// The worst errors of f (a vmath function) over xs: relative against g
// (the same function of glibc; absolute where g gives 0) and in ulp against
// g on long double.
struct Errors {
    Worst vs_std, vs_ld;
};
template <typename F, typename G>
Errors errors_of(const std::vector<double>& xs, F f, G g) {
    Errors e;
    for (const double x : xs) {
        const double v = f(x), s = g(x);
        if (s == 0.0) {
            e.vs_std.add(std::fabs(v), x);
            continue;
        }
        e.vs_std.add(rel(v, s), x);
        if (kWideLongDouble) e.vs_ld.add(ulps(v, g(static_cast<long double>(x))), x);
    }
    return e;
}

// Points just around b: b itself, its neighbours a few ulps away, and a
// window of ±1e-3·max(1, |b|) sampled densely.
void add_around(std::vector<double>& xs, double b, int n = 2000) {
    double lo = b, hi = b;
    for (int i = 0; i < 8; ++i) {
        xs.push_back(lo);
        xs.push_back(hi);
        lo = std::nextafter(lo, -kInf);
        hi = std::nextafter(hi, kInf);
    }
    const double w = 1e-3 * std::fmax(1.0, std::fabs(b));
    for (int i = -n; i <= n; ++i) xs.push_back(b + w * i / n);
}

// The exp test points: a dense sweep of [-745.2, 710], seeded random points
// over the same range and over |x| < 1, tiny |x|, and the range-reduction
// ties (k + 1/2)·ln 2 where k = round(x/ln 2) switches.
std::vector<double> exp_points() {
    std::vector<double> xs;
    for (int i = 0; i <= 1455200; ++i) xs.push_back(-745.2 + 1e-3 * i);
    std::mt19937_64 rng(20240611);
    std::uniform_real_distribution<double> wide(-745.2, 710.0), unit(-1.0, 1.0), mant(1.0, 2.0);
    std::uniform_int_distribution<int> ex(-1074, -1);
    for (int i = 0; i < 1000000; ++i) xs.push_back(wide(rng));
    for (int i = 0; i < 200000; ++i) xs.push_back(unit(rng));
    for (int i = 0; i < 20000; ++i) xs.push_back((i % 2 ? 1 : -1) * std::ldexp(mant(rng), ex(rng)));
    for (int k = -1076; k <= 1024; ++k) add_around(xs, (k + 0.5) * 0.69314718055994530942, 4);
    return xs;
}

}  // namespace

TEST_CASE("vmath::exp matches std::exp over [-745, 710]", "[engine][vmath]") {
    const std::vector<double> xs = exp_points();
    Worst vs_std, vs_std_subnormal, vs_ld;
    int64_t overflow_mismatches = 0;
    for (const double x : xs) {
        const double v = vmath::exp(x);
        const double s = std::exp(x);
        if (std::isinf(s)) {  // x > ln(DBL_MAX)
            if (v != s) ++overflow_mismatches;
        } else if (s >= DBL_MIN) {
            vs_std.add(rel(v, s), x);
        } else {
            // Subnormal (or zero) results: absolute, in units of 2^-1074.
            vs_std_subnormal.add(std::fabs(v - s) / std::numeric_limits<double>::denorm_min(), x);
        }
        if (kWideLongDouble && s >= DBL_MIN && !std::isinf(s)) {
            vs_ld.add(ulps(v, std::exp(static_cast<long double>(x))), x);
        }
    }
    CHECK(overflow_mismatches == 0);
    INFO(xs.size() << " points");
    INFO(vs_std.str("relative error against std::exp"));
    INFO(vs_std_subnormal.str("error against std::exp for subnormal results, in units of 2^-1074,"));
    INFO(vs_ld.str("error against expl, in ulp,"));
    CHECK(vs_std.err <= 2.5e-16);  // never two ulps apart (1 ulp is <= 2.2e-16)
    CHECK(vs_std_subnormal.err <= 1.0);
    if (kWideLongDouble) CHECK(vs_ld.err <= 1.0);
}

TEST_CASE("vmath::exp special values, overflow and underflow", "[engine][vmath]") {
    CHECK(vmath::exp(0.0) == 1.0);
    CHECK(vmath::exp(-0.0) == 1.0);
    CHECK(vmath::exp(1.0) == std::exp(1.0));
    CHECK(vmath::exp(kInf) == kInf);
    CHECK(vmath::exp(-kInf) == 0.0);
    CHECK(std::isnan(vmath::exp(kNaN)));
    CHECK(std::isnan(vmath::exp(-kNaN)));
    // Overflow just above ln(DBL_MAX) = 709.782712893384.
    CHECK(std::isfinite(vmath::exp(709.78)));
    CHECK(vmath::exp(709.782712893384) == std::exp(709.782712893384));
    CHECK(vmath::exp(709.7828) == kInf);
    CHECK(vmath::exp(710.0) == kInf);
    CHECK(vmath::exp(1e300) == kInf);
    CHECK(vmath::exp(DBL_MAX) == kInf);
    // Gradual underflow: the smallest subnormal at -745, 0 below -745.14.
    CHECK(vmath::exp(-708.5) == std::exp(-708.5));
    CHECK(vmath::exp(-720.0) == std::exp(-720.0));
    CHECK(vmath::exp(-745.0) == std::numeric_limits<double>::denorm_min());
    CHECK(vmath::exp(-745.2) == 0.0);
    CHECK(vmath::exp(-746.0) == 0.0);
    CHECK(vmath::exp(-1e300) == 0.0);
    CHECK(vmath::exp(-DBL_MAX) == 0.0);
    // Tiny arguments: e^x = 1 + x to double precision.
    CHECK(vmath::exp(1e-300) == 1.0);
    CHECK(vmath::exp(-1e-300) == 1.0);
    CHECK(vmath::exp(0x1p-30) == std::exp(0x1p-30));
}

// Φ(x) in long double: ½ erfc(-x/√2) (erfcl keeps its relative accuracy in
// the lower tail, where ½(1 + erfl) would cancel).
static long double phi_ld(double x) { return 0.5L * std::erfc(-static_cast<long double>(x) / std::sqrt(2.0L)); }

TEST_CASE("vmath::normal_cdf is Φ to a few ulp down to x = -4√2, to 1e-19 below", "[engine][vmath]") {
    std::vector<double> xs;
    // Dense sweep of [-40, 10] (Φ underflows below -38.5 and is 1 above
    // 8.3), denser on [-9, 9]; random points; tiny |x|; the boundaries
    // (a = |x|/√2 = 0.84375 and 6, Cody's 0.46875 and 4, e^(-x²/2)'s 38.61).
    for (int i = 0; i <= 200000; ++i) xs.push_back(-40.0 + 2.5e-4 * i);
    for (int i = 0; i <= 1200000; ++i) xs.push_back(-9.0 + 1.5e-5 * i);
    std::mt19937_64 rng(19690401);
    std::uniform_real_distribution<double> wide(-40.0, 10.0), mid(-9.0, 9.0), small(-1e-3, 1e-3), mant(1.0, 2.0);
    std::uniform_int_distribution<int> ex(-1022, -10);
    for (int i = 0; i < 200000; ++i) xs.push_back(wide(rng));
    for (int i = 0; i < 800000; ++i) xs.push_back(mid(rng));
    for (int i = 0; i < 50000; ++i) xs.push_back(small(rng));
    for (int i = 0; i < 20000; ++i) xs.push_back((i % 2 ? 1 : -1) * std::ldexp(mant(rng), ex(rng)));
    for (const double a : {0.46875, 0.84375, 4.0, 6.0}) {
        add_around(xs, a * M_SQRT2);
        add_around(xs, -a * M_SQRT2);
    }
    add_around(xs, -38.61);

    Worst ulp_ld, gauss_ulp, tail_abs;
    for (const double x : xs) {
        double gauss;
        const double v = vmath::normal_cdf(x, gauss);
        const long double ref = phi_ld(x), ref_gauss = std::exp(-static_cast<long double>(x) * x / 2);
        if (!kWideLongDouble) continue;
        if (x >= -4.0 * M_SQRT2)
            ulp_ld.add(ulps(v, ref), x);
        else  // Φ < 7.8e-9: accurate in absolute terms only (see vmath.h)
            tail_abs.add(static_cast<double>(std::fabs(static_cast<long double>(v) - ref)), x);
        if (ref_gauss >= DBL_MIN) gauss_ulp.add(ulps(gauss, ref_gauss), x);
    }
    INFO(xs.size() << " points");
    INFO(ulp_ld.str("error against ½ erfcl(-x/√2), in ulp of Φ,"));
    INFO(gauss_ulp.str("error of the second result against expl(-x²/2), in ulp,"));
    INFO(tail_abs.str("absolute error below x = -4√2:"));
    if (kWideLongDouble) {
        CHECK(ulp_ld.err <= 8.0);
        CHECK(gauss_ulp.err <= 1.5);
        CHECK(tail_abs.err <= 1e-19);
    }
}

TEST_CASE("vmath::normal_cdf special values", "[engine][vmath]") {
    double gauss;
    CHECK(vmath::normal_cdf(0.0, gauss) == 0.5);
    CHECK(gauss == 1.0);
    CHECK(vmath::normal_cdf(-0.0, gauss) == 0.5);
    CHECK(vmath::normal_cdf(kInf, gauss) == 1.0);
    CHECK(gauss == 0.0);
    CHECK(vmath::normal_cdf(-kInf, gauss) == 0.0);
    CHECK(gauss == 0.0);
    CHECK(std::isnan(vmath::normal_cdf(kNaN, gauss)));
    CHECK(std::isnan(gauss));
    CHECK(std::isnan(vmath::normal_cdf(-kNaN, gauss)));
    for (const double x : {8.3, 8.5, 10.0, 38.0, 40.0, 1e10, 1e300, DBL_MAX}) {
        CAPTURE(x);
        CHECK(vmath::normal_cdf(x, gauss) == 1.0);
    }
    for (const double x : {38.61, 38.7, 40.0, 1e10, 1e300, DBL_MAX}) {
        CAPTURE(x);
        CHECK(vmath::normal_cdf(-x, gauss) == 0.0);
        CHECK(gauss == 0.0);
    }
    // Tiny arguments: Φ(x) = ½ + x/√(2π), which rounds to ½.
    for (const double x : {1e-20, 1e-200, DBL_MIN, std::numeric_limits<double>::denorm_min()}) {
        CAPTURE(x);
        CHECK(vmath::normal_cdf(x, gauss) == 0.5);
        CHECK(vmath::normal_cdf(-x, gauss) == 0.5);
    }
    // Φ is increasing: no step down at the interval boundaries.
    for (const double b : {0.84375 * M_SQRT2, 6.0 * M_SQRT2, -0.84375 * M_SQRT2, -6.0 * M_SQRT2, -38.61}) {
        CAPTURE(b);
        const double lo = std::nextafter(b, -kInf), hi = std::nextafter(b, kInf);
        CHECK(vmath::normal_cdf(lo, gauss) <= vmath::normal_cdf(b, gauss));
        CHECK(vmath::normal_cdf(b, gauss) <= vmath::normal_cdf(hi, gauss));
    }
}

TEST_CASE("vmath::sigmoid is accurate and stable for both signs", "[engine][vmath]") {
    std::vector<double> xs;
    for (int i = 0; i <= 400000; ++i) xs.push_back(-800.0 + 4e-3 * i);
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> u(-40.0, 40.0);
    for (int i = 0; i < 200000; ++i) xs.push_back(u(rng));
    Worst vs_ld;
    int64_t out_of_range = 0;  // well defined everywhere: in [0, 1], never NaN
    for (const double x : xs) {
        const double v = vmath::sigmoid(x);
        const long double ref = 1.0L / (1.0L + std::exp(-static_cast<long double>(x)));
        if (kWideLongDouble && ref >= DBL_MIN) vs_ld.add(ulps(v, ref), x);
        if (!(v >= 0.0 && v <= 1.0)) ++out_of_range;
    }
    CHECK(out_of_range == 0);
    INFO(xs.size() << " points");
    INFO(vs_ld.str("error against long double, in ulp,"));
    if (kWideLongDouble) CHECK(vs_ld.err <= 2.5);

    CHECK(vmath::sigmoid(0.0) == 0.5);
    CHECK(vmath::sigmoid(kInf) == 1.0);
    CHECK(vmath::sigmoid(-kInf) == 0.0);
    CHECK(vmath::sigmoid(800.0) == 1.0);
    CHECK(vmath::sigmoid(-800.0) == 0.0);
    CHECK(vmath::sigmoid(-700.0) > 0.0);  // e^-700 ≈ 1e-304, not flushed
    CHECK(std::isnan(vmath::sigmoid(kNaN)));
}

TEST_CASE("vmath::tanh matches std::tanh", "[engine][vmath]") {
    std::vector<double> xs;
    for (int i = 0; i <= 800000; ++i) xs.push_back(-40.0 + 1e-4 * i);
    std::mt19937_64 rng(1980);
    std::uniform_real_distribution<double> u(-3.0, 3.0), mant(1.0, 2.0);
    std::uniform_int_distribution<int> ex(-1074, -1);
    for (int i = 0; i < 300000; ++i) xs.push_back(u(rng));
    for (int i = 0; i < 50000; ++i) xs.push_back((i % 2 ? 1 : -1) * std::ldexp(mant(rng), ex(rng)));  // tiny |x|
    add_around(xs, 0.54930614433405484570);  // where the two formulas meet
    add_around(xs, -0.54930614433405484570);

    const auto [vs_std, vs_ld] = errors_of(
        xs, [](double x) { return vmath::tanh(x); }, [](auto x) { return std::tanh(x); });
    INFO(xs.size() << " points");
    INFO(vs_std.str("relative error against std::tanh"));
    INFO(vs_ld.str("error against tanhl, in ulp,"));
    CHECK(vs_std.err <= 4.5e-16);  // at most two ulps apart
    if (kWideLongDouble) CHECK(vs_ld.err <= 1.5);

    CHECK(vmath::tanh(0.0) == 0.0);
    CHECK(std::signbit(vmath::tanh(-0.0)));
    CHECK(vmath::tanh(kInf) == 1.0);
    CHECK(vmath::tanh(-kInf) == -1.0);
    CHECK(vmath::tanh(800.0) == 1.0);  // e^1600 overflows: still exactly 1
    CHECK(vmath::tanh(-20.0) == -1.0);
    CHECK(vmath::tanh(1e-300) == 1e-300);
    CHECK(vmath::tanh(-5e-324) == -5e-324);
    CHECK(std::isnan(vmath::tanh(kNaN)));
    for (const double x : xs) {  // odd, bit for bit
        if (bits(vmath::tanh(-x)) != (bits(vmath::tanh(x)) ^ (std::uint64_t{1} << 63))) {
            FAIL("tanh(-x) is not -tanh(x) at x = " << x);
        }
    }
}

TEST_CASE("vmath::log1p matches std::log1p", "[engine][vmath]") {
    std::vector<double> xs;
    std::mt19937_64 rng(1986);
    std::uniform_real_distribution<double> mant(1.0, 2.0), above_minus1(-1.0, 1.0);
    std::uniform_int_distribution<int> ex(-1074, 1023);
    // Every binade of positive x, tiny ones of both signs, and (-1, 1).
    for (int i = 0; i < 400000; ++i) xs.push_back(std::ldexp(mant(rng), ex(rng)));
    for (int i = 0; i < 100000; ++i) xs.push_back(-std::ldexp(mant(rng), -1 - (i % 60)));
    for (int i = 0; i < 300000; ++i) xs.push_back(above_minus1(rng));
    for (int e = -1074; e <= 1023; ++e) xs.push_back(std::ldexp(1.0, e));
    xs.push_back(std::nextafter(-1.0, 0.0));
    xs.push_back(DBL_MAX);

    const auto [vs_std, vs_ld] = errors_of(
        xs, [](double x) { return vmath::log1p(x); }, [](auto x) { return std::log1p(x); });
    INFO(xs.size() << " points");
    INFO(vs_std.str("relative error against std::log1p"));
    INFO(vs_ld.str("error against log1pl, in ulp,"));
    CHECK(vs_std.err <= 4.5e-16);
    if (kWideLongDouble) CHECK(vs_ld.err <= 1.5);

    CHECK(vmath::log1p(0.0) == 0.0);
    CHECK(vmath::log1p(1e-300) == 1e-300);
    CHECK(vmath::log1p(-1.0) == -kInf);
    CHECK(vmath::log1p(kInf) == kInf);
    CHECK(std::isnan(vmath::log1p(-1.5)));
    CHECK(std::isnan(vmath::log1p(-kInf)));
    CHECK(std::isnan(vmath::log1p(kNaN)));
}

TEST_CASE("vmath::log matches std::log", "[engine][vmath]") {
    std::vector<double> xs;
    std::mt19937_64 rng(1993);
    std::uniform_real_distribution<double> mant(1.0, 2.0), near1(-0.5, 0.5), eps(-1e-6, 1e-6);
    std::uniform_int_distribution<int> ex(-1074, 1023);
    // Every binade, subnormals included.
    for (int i = 0; i < 600000; ++i) xs.push_back(std::ldexp(mant(rng), ex(rng)));
    // Around 1, where log x is small and relative accuracy is hardest.
    for (int i = 0; i < 200000; ++i) xs.push_back(1.0 + near1(rng));
    for (int i = 0; i < 100000; ++i) xs.push_back(1.0 + eps(rng));
    // The reduction's switch at √2 and the powers of two.
    add_around(xs, std::sqrt(2.0));
    add_around(xs, std::sqrt(0.5));
    for (int e = -1074; e <= 1023; ++e) xs.push_back(std::ldexp(1.0, e));
    xs.push_back(DBL_MAX);

    const auto [vs_std, vs_ld] = errors_of(
        xs, [](double x) { return vmath::log(x); }, [](auto x) { return std::log(x); });
    INFO(xs.size() << " points");
    INFO(vs_std.str("relative error against std::log"));
    INFO(vs_ld.str("error against logl, in ulp,"));
    CHECK(vs_std.err <= 2.5e-16);
    if (kWideLongDouble) CHECK(vs_ld.err <= 1.0);

    CHECK(vmath::log(1.0) == 0.0);
    CHECK(vmath::log(2.0) == std::log(2.0));
    CHECK(vmath::log(0.0) == -kInf);
    CHECK(vmath::log(-0.0) == -kInf);
    CHECK(vmath::log(kInf) == kInf);
    CHECK(std::isnan(vmath::log(-1.0)));
    CHECK(std::isnan(vmath::log(-1e-310)));
    CHECK(std::isnan(vmath::log(-kInf)));
    CHECK(std::isnan(vmath::log(kNaN)));
    CHECK(vmath::log(std::numeric_limits<double>::denorm_min()) == std::log(std::numeric_limits<double>::denorm_min()));
}

TEST_CASE("vmath functions give the same bits in a SIMD loop and in a scalar call", "[engine][vmath]") {
    // The header's results must not depend on the vector width (no FMA
    // contraction, no approximate instructions): compare a `#pragma omp
    // simd` loop, which GCC vectorises, with calls through a volatile
    // function pointer, which it cannot inline or vectorise.
    std::vector<double> xs;
    std::mt19937_64 rng(42);
    std::uniform_real_distribution<double> u(-30.0, 30.0), w(-800.0, 800.0);
    for (int i = 0; i < 4096; ++i) xs.push_back(i % 4 ? u(rng) : w(rng));
    xs.insert(xs.end(),
              {0.0, -0.0, kInf, -kInf, kNaN, 1e-310, 0.84375, 1.25, 1.1932, 6.0, 8.4853, -38.6, 709.8, -745.0});
    const int64_t n = static_cast<int64_t>(xs.size());
    const double* x = xs.data();
    std::vector<double> simd(xs.size()), scalar(xs.size());
    double* y = simd.data();

    double (*volatile f_exp)(double) = [](double v) { return vmath::exp(v); };
    double (*volatile f_cdf)(double) = [](double v) {
        double gauss;
        return vmath::normal_cdf(v, gauss);
    };
    double (*volatile f_gauss)(double) = [](double v) {
        double gauss;
        vmath::normal_cdf(v, gauss);
        return gauss;
    };
    double (*volatile f_sigmoid)(double) = [](double v) { return vmath::sigmoid(v); };
    double (*volatile f_log)(double) = [](double v) { return vmath::log(std::fabs(v)); };
    double (*volatile f_tanh)(double) = [](double v) { return vmath::tanh(v); };
    double (*volatile f_log1p)(double) = [](double v) { return vmath::log1p(std::fabs(v)); };

    const auto same = [&](const char* name, double (*volatile f)(double)) {
        int64_t differ = 0;
        for (int64_t i = 0; i < n; ++i) {
            scalar[static_cast<size_t>(i)] = f(x[i]);
            const double a = scalar[static_cast<size_t>(i)], b = y[i];
            // NaNs may differ in sign or payload (the vector code may order
            // the operands of a commutative operation differently).
            if (bits(a) != bits(b) && !(std::isnan(a) && std::isnan(b))) ++differ;
        }
        INFO(name << ": " << differ << " of " << n << " results differ");
        CHECK(differ == 0);
    };
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) y[i] = vmath::exp(x[i]);
    same("exp", f_exp);
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) {
        double gauss;
        y[i] = vmath::normal_cdf(x[i], gauss);
    }
    same("normal_cdf", f_cdf);
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) vmath::normal_cdf(x[i], y[i]);
    same("normal_cdf's e^(-x²/2)", f_gauss);
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) y[i] = vmath::sigmoid(x[i]);
    same("sigmoid", f_sigmoid);
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) y[i] = vmath::log(std::fabs(x[i]));
    same("log", f_log);
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) y[i] = vmath::tanh(x[i]);
    same("tanh", f_tanh);
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) y[i] = vmath::log1p(std::fabs(x[i]));
    same("log1p", f_log1p);
}
