// Exercise 9 · RMSNorm vs LayerNorm (§3.2, exercise 9): the lecture's
// example; the edges (one element, a constant or zero vector: eps keeps
// them finite); the reference on random vectors and eps, with the usual
// slips named (eps outside the square root, only against zero or added
// before the mean, the unbiased variance, the L2 norm, mean(|x|) or the root
// before the mean in place of the RMS, RMSNorm centring, LayerNorm's
// variance about 0, no square root, x returned unchanged, float precision);
// a large mean (the variance
// as mean((x - mean)²), not mean(x²) - mean²); and RMSNorm = LayerNorm on
// zero-mean vectors.
#include <cmath>
#include <functional>
#include <iomanip>

#include "exercises/ex09_norms.h"
#include "grading_checks.h"
#include "reference/ex09_norms.h"

namespace ref = ex09_reference;
using Vec = std::vector<double>;

namespace {

double mean(const Vec& x) {
    double s = 0;
    for (const double v : x) s += v;
    return s / static_cast<double>(x.size());
}

double mean_square(const Vec& x, double about = 0.0) {
    double s = 0;
    for (const double v : x) s += (v - about) * (v - about);
    return s / static_cast<double>(x.size());
}

// (x - centre) / scale, elementwise.
Vec normalized(const Vec& x, double centre, double scale) {
    Vec y;
    for (const double v : x) y.push_back((v - centre) / scale);
    return y;
}

// A wrong turn a student takes: what it computes, and what to tell them.
struct Slip {
    std::function<Vec(const Vec&, double)> f;
    const char* message;
};

// §3.2: RMSNorm(x) = x / sqrt(mean(x²) + eps), no centring.
const std::vector<Slip>& rms_slips() {
    static const std::vector<Slip> slips{
        {[](const Vec& x, double eps) { return normalized(x, 0, std::sqrt(mean_square(x)) + eps); },
         "eps belongs inside the square root: sqrt(mean(x²) + eps), not sqrt(mean(x²)) + eps"},
        {[](const Vec& x, double) { return normalized(x, 0, std::sqrt(mean_square(x))); },
         "you left eps out: divide by sqrt(mean(x²) + eps) for every x, not only when mean(x²) is 0"},
        {[](const Vec& x, double eps) {
             return normalized(x, 0, std::sqrt(mean_square(x) * static_cast<double>(x.size()) + eps));
         },
         "you divided by the L2 norm sqrt(Σx² + eps): the RMS is the root of the MEAN of the squares"},
        {[](const Vec& x, double eps) { return normalized(x, mean(x), std::sqrt(mean_square(x) + eps)); },
         "RMSNorm does not subtract the mean: it only scales x (the output keeps x's mean)"},
        {[](const Vec& x, double eps) { return ref::layer_norm(x, eps); },
         "that is LayerNorm: RMSNorm does not subtract the mean, it divides x by sqrt(mean(x²) + eps)"},
        {[](const Vec& x, double eps) { return normalized(x, 0, mean_square(x) + eps); },
         "you divided by mean(x²) + eps: take its square root"},
        {[](const Vec& x, double eps) {
             const double n = static_cast<double>(x.size());
             return normalized(x, 0, std::sqrt(mean_square(x) * n / (n - 1) + eps));
         },
         "you divided Σx² by n - 1: the mean of the squares divides by n"},
        {[](const Vec& x, double eps) {
             const double n = static_cast<double>(x.size());
             return normalized(x, 0, std::sqrt((mean_square(x) * n + eps) / n));
         },
         "eps was added to Σx² before dividing by n: sqrt(mean(x²) + eps) adds it to the mean"},
        {[](const Vec& x, double eps) {
             double s = 0;
             for (const double v : x) s += std::fabs(v);
             return normalized(x, 0, s / static_cast<double>(x.size()) + eps);
         },
         "you divided by the mean absolute value mean(|x|): the RMS is the root of the mean of the SQUARES"},
        {[](const Vec& x, double eps) {
             const double n = static_cast<double>(x.size());
             return normalized(x, 0, std::sqrt(mean_square(x) * n + eps) / n);
         },
         "you took the root before the mean, sqrt(Σx²)/n: the RMS is sqrt(Σx²/n + eps)"},
        {[](const Vec& x, double) { return x; },
         "you returned x unchanged: RMSNorm divides every x, even a single element, by sqrt(mean(x²) + eps)"},
    };
    return slips;
}

// LayerNorm(x) = (x - mean) / sqrt(var + eps), var = mean((x - mean)²).
const std::vector<Slip>& layer_slips() {
    static const std::vector<Slip> slips{
        {[](const Vec& x, double eps) {
             const double n = static_cast<double>(x.size());
             return normalized(x, mean(x), std::sqrt(mean_square(x, mean(x)) * n / (n - 1) + eps));
         },
         "you used the unbiased variance (÷ n-1); LayerNorm uses the biased one, mean((x - mean)²) (÷ n)"},
        {[](const Vec& x, double eps) { return normalized(x, mean(x), std::sqrt(mean_square(x, mean(x))) + eps); },
         "eps belongs inside the square root: sqrt(var + eps), not sqrt(var) + eps"},
        {[](const Vec& x, double) { return normalized(x, mean(x), std::sqrt(mean_square(x, mean(x)))); },
         "you left eps out: divide by sqrt(var + eps) for every x, not only when var is 0"},
        {[](const Vec& x, double eps) { return normalized(x, mean(x), std::sqrt(mean_square(x) + eps)); },
         "your variance is mean(x²), taken about 0: it is mean((x - mean)²), about the mean"},
        {[](const Vec& x, double eps) { return normalized(x, 0, std::sqrt(mean_square(x, mean(x)) + eps)); },
         "you divided by the standard deviation but did not subtract the mean from x"},
        {[](const Vec& x, double eps) { return normalized(x, mean(x), mean_square(x, mean(x)) + eps); },
         "you divided by var + eps: take its square root"},
        {[](const Vec& x, double eps) {
             const double n = static_cast<double>(x.size());
             return normalized(x, mean(x), std::sqrt((mean_square(x, mean(x)) * n + eps) / n));
         },
         "eps was added to Σ(x - mean)² before dividing by n: sqrt(var + eps) adds it to the variance"},
        {[](const Vec& x, double) { return x; },
         "you returned x unchanged: LayerNorm subtracts the mean even from a single element (giving 0)"},
    };
    return slips;
}

// The result of `what`(x, eps) against `want`; FAILs naming a known slip.
void check_norm(const char* what, const Vec& got, const Vec& want, const std::vector<Slip>& slips, const Vec& x,
                double eps, double tol = 1e-9) {
    INFO(what << "(x = " << grading::str(x) << ", eps = " << eps << ")\n expected " << grading::str(want)
              << "\n got      " << grading::str(got));
    REQUIRE(got.size() == x.size());
    if (!grading::same_values(got, want, tol))
        for (const Slip& s : slips)
            if (grading::same_values(got, s.f(x, eps), tol)) FAIL(s.message);
    if (!grading::same_values(got, want, tol) && grading::same_values(got, want, 1e-5))
        FAIL("close, but right to only about 6 or 7 digits: is something summed or divided in float? Use double");
    CHECK(grading::same_values(got, want, tol));
}

void check_both(const Vec& x, double eps, double tol = 1e-9) {
    check_norm("rms_norm", ex09::rms_norm(x, eps), ref::rms_norm(x, eps), rms_slips(), x, eps, tol);
    check_norm("layer_norm", ex09::layer_norm(x, eps), ref::layer_norm(x, eps), layer_slips(), x, eps, tol);
}

bool all_finite(const Vec& v) {
    for (const double x : v)
        if (!std::isfinite(x)) return false;
    return true;
}

}  // namespace

TEST_CASE("ex09 the lecture's x = [1, 2, 3, 4]") {
    const Vec x{1, 2, 3, 4};
    const Vec rms = ex09::rms_norm(x, 0.0), ln = ex09::layer_norm(x, 0.0);
    Vec want_rms, want_ln;
    for (int i = 0; i < 4; ++i) {
        want_rms.push_back((i + 1) / std::sqrt(7.5));        // rms = sqrt(30 / 4) = 2.7386
        want_ln.push_back((i + 1 - 2.5) / std::sqrt(1.25));  // mean 2.5, std 1.118
    }
    {
        INFO("RMSNorm: rms = sqrt(7.5) = 2.7386, x / rms = [0.365, 0.730, 1.095, 1.461]");
        check_norm("rms_norm", rms, want_rms, rms_slips(), x, 0.0, 1e-12);
    }
    INFO("LayerNorm: mean 2.5, std 1.118: [-1.342, -0.447, 0.447, 1.342]");
    check_norm("layer_norm", ln, want_ln, layer_slips(), x, 0.0, 1e-12);
}

// eps is what keeps a vector with nothing to divide by finite: a zero
// vector (RMS 0), a constant one (variance 0), one element (variance 0).
TEST_CASE("ex09 edges: one element, constant and zero vectors stay finite with eps > 0") {
    for (const double eps : {1e-5, 0.5}) {
        for (const Vec& x : {Vec{3.0}, Vec{-0.25}, Vec(7, 2.5), Vec(5, 0.0)}) {
            {
                const Vec rms = ex09::rms_norm(x, eps), ln = ex09::layer_norm(x, eps);
                INFO("x = " << grading::str(x) << ", eps = " << eps << ": LayerNorm is 0 everywhere (x - mean = 0, "
                            << "var = 0, divided by sqrt(0 + eps)); RMSNorm is x / sqrt(mean(x²) + eps)\n rms_norm "
                            << grading::str(rms) << "\n layer_norm " << grading::str(ln));
                if (!all_finite(rms) || !all_finite(ln))
                    FAIL(
                        "NaN or inf: eps > 0 is there so that nothing is divided by zero, divide by "
                        "sqrt(mean(x²) + eps) and sqrt(var + eps) (a constant vector or a single element has var = 0)");
            }
            check_both(x, eps);
        }
    }
}

TEST_CASE("ex09 both equal the reference on random vectors and eps") {
    grading::Random rng(12);
    for (int n = 0; n < 300; ++n) {
        Vec x(static_cast<size_t>(rng.integer(2, 64)));
        const double shift = rng.uniform(-3, 3), scale = n % 4 == 0 ? rng.uniform(1e-3, 0.1) : rng.uniform(0.5, 20);
        for (double& v : x) v = scale * rng.normal() + shift;
        const double eps = n % 3 == 0 ? 0.0 : rng.uniform(1e-6, 1.0);
        check_both(x, eps);
    }
}

// Activations whose mean is far larger than their spread: mean(x²) - mean²
// subtracts two numbers near 10¹² and keeps only a few digits of the
// variance; mean((x - mean)²), as stated, keeps them all.
TEST_CASE("ex09 LayerNorm keeps its digits when the mean is large (var = mean((x - mean)²))") {
    grading::Random rng(14);
    for (int n = 0; n < 20; ++n) {
        Vec x(static_cast<size_t>(rng.integer(4, 64)));
        const double offset = (n % 2 ? 1.0 : -1.0) * rng.uniform(1e5, 1e6);
        for (double& v : x) v = offset + rng.normal();
        const Vec got = ex09::layer_norm(x, 1e-5), want = ref::layer_norm(x, 1e-5);
        REQUIRE(got.size() == x.size());
        size_t worst = 0;
        for (size_t i = 0; i < x.size(); ++i)
            if (!(std::fabs(got[i] - want[i]) <= std::fabs(got[worst] - want[worst]))) worst = i;
        INFO("x = " << offset << " + N(0, 1), " << x.size() << " elements: LayerNorm's element " << worst
                    << std::setprecision(12) << " (x = " << x[worst] << ") expected " << want[worst] << ", got "
                    << got[worst]);
        if (!grading::same_values(got, want, 1e-7))
            FAIL(
                "your LayerNorm loses its digits when the mean is large (if you compute var as mean(x²) - mean², "
                "that subtracts two huge, nearly equal numbers): subtract the mean first, var = mean((x - mean)²)");
        check_both(x, 1e-5, 1e-7);
    }
}

TEST_CASE("ex09 RMSNorm equals LayerNorm when the mean is zero") {
    grading::Random rng(13);
    for (int n = 0; n < 50; ++n) {
        Vec x(static_cast<size_t>(rng.integer(2, 32)));
        for (double& v : x) v = rng.normal();
        const double mu = mean(x);
        for (double& v : x) v -= mu;
        const Vec rms = ex09::rms_norm(x, 1e-5), ln = ex09::layer_norm(x, 1e-5);
        INFO("x = " << grading::str(x) << " has mean 0, so mean(x²) = var and both norms must agree\n rms_norm   "
                    << grading::str(rms) << "\n layer_norm " << grading::str(ln));
        CHECK(grading::same_values(rms, ln, 1e-9));
    }
}
