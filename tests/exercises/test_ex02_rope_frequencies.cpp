// Exercise 2 · RoPE's range of speeds (§4.5): θ_i = base^(-2(i-1)/d) and the
// periods 2π/θ, against the reference (relative to each value: the slowest
// θ are tiny) and the lecture's numbers, for one pair (d = 2) up to d = 256.
// Diagnoses the usual wrong turns: one θ per dimension, the exponent
// computed in integers, -(i-1)/d, -2i/d (θ_1 not 1), the slowest pair first,
// a positive exponent, the slowest θ stretched to exactly 1/base, -4(i-1)/d
// (the dimension index for i), 2π·base^(-2(i-1)/d), float precision; a period
// of 1/θ, π/θ or θ/2π, rounded to whole positions or with π rounded.
#include <functional>
#include <iomanip>
#include <string>
#include <vector>

#include "exercises/ex02_rope_frequencies.h"
#include "grading_checks.h"
#include "reference/ex02_rope_frequencies.h"

namespace ref = ex02_reference;

namespace {

// |a - b| <= tol·|b|: θ goes down to base^(-1) and below, where an absolute
// tolerance would accept anything.
bool relatively_close(double a, double b, double tol = 1e-12) { return std::fabs(a - b) <= tol * std::fabs(b); }

bool all_relatively_close(const std::vector<double>& a, const std::vector<double>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (!relatively_close(a[i], b[i], 1e-9)) return false;
    return true;
}

// θ_{i+1} = base^(exponent(i)) for i = 0 … d/2 - 1 (the lecture counts pairs from 1).
std::vector<double> thetas_with(int64_t d, double base, const std::function<double(double i)>& exponent) {
    std::vector<double> out;
    for (int64_t i = 0; i < d / 2; ++i) out.push_back(std::pow(base, exponent(static_cast<double>(i))));
    return out;
}

// What rope_thetas(d, base) returns under a wrong idea, and what it is.
struct WrongThetas {
    std::function<std::vector<double>(int64_t d, double base)> thetas;
    const char* diagnosis;
};

const std::vector<WrongThetas>& wrong_thetas() {
    static const std::vector<WrongThetas> all = {
        {[](int64_t d, double) { return std::vector<double>(static_cast<size_t>(d / 2), 1.0); },
         "every θ is 1: the exponent -2(i-1)/d computed in integers is 0 for every i ≤ d/2; compute it in "
         "floating point"},
        {[](int64_t d, double base) {
             return thetas_with(d, base, [d](double i) { return -i / static_cast<double>(d); });
         },
         "your θ_i is base^(-(i-1)/d): the exponent is -2(i-1)/d (i counts pairs, two dimensions each)"},
        {[](int64_t d, double base) {
             return thetas_with(d, base, [d](double i) { return -2.0 * (i + 1) / static_cast<double>(d); });
         },
         "your θ_1 is base^(-2/d): the exponent is -2(i-1)/d, so the fastest pair turns θ_1 = base^0 = 1 radian per "
         "position"},
        {[](int64_t d, double base) {
             std::vector<double> t = ref::rope_thetas(d, base);
             return std::vector<double>(t.rbegin(), t.rend());
         },
         "your list starts with the slowest pair: θ_i = base^(-2(i-1)/d) shrinks with i, so θ_1 = 1 (the fastest) "
         "comes first and the slowest last"},
        {[](int64_t d, double base) {
             return thetas_with(d, base, [d](double i) { return 2.0 * i / static_cast<double>(d); });
         },
         "your θ grow with i: the exponent is negative, -2(i-1)/d, the speeds go down from 1"},
        {[](int64_t d, double base) {
             return thetas_with(d, base, [d](double i) { return -i / static_cast<double>(d / 2 - 1); });
         },
         "your slowest θ is exactly 1/base: the exponent is -2(i-1)/d, so the last pair (i = d/2) turns "
         "base^(-(d-2)/d), a little faster than 1/base"},
        {[](int64_t d, double base) {
             return thetas_with(d, base, [d](double i) { return -4.0 * i / static_cast<double>(d); });
         },
         "your θ_i is base^(-4(i-1)/d): you put the pair's first dimension 2(i-1) (from 0) where the formula has "
         "i-1 (θ_i = base^(-2(i-1)/d), i = 1, 2, 3, …)"},
        {[](int64_t d, double base) {
             std::vector<double> t = ref::rope_thetas(d, base);
             for (double& v : t) v *= 2 * M_PI;
             return t;
         },
         "your θ are 2π·base^(-2(i-1)/d), as if base^(2(i-1)/d) were a period: θ_i = base^(-2(i-1)/d) radians per "
         "position "
         "itself, so the fastest pair turns θ_1 = 1 radian (period 2π)"},
    };
    return all;
}

// rope_thetas(d, base) against the reference, value by value; FAILs with
// the diagnosis of a known wrong idea when the answer is that idea's.
void check_thetas(int64_t d, double base) {
    const std::vector<double> got = ex02::rope_thetas(d, base), want = ref::rope_thetas(d, base);
    INFO("rope_thetas(d = " << d << ", base = " << base << ")");
    if (got.size() != want.size()) {
        if (static_cast<int64_t>(got.size()) == d)
            FAIL("you returned " << d << " values: one θ per pair of dimensions, d/2 = " << d / 2 << " of them");
        FAIL("expected d/2 = " << d / 2 << " values (one per pair, i = 1 … d/2), got " << got.size());
    }
    if (all_relatively_close(got, want)) return;
    for (const WrongThetas& wrong : wrong_thetas())
        if (d > 2 && all_relatively_close(got, wrong.thetas(d, base))) FAIL(wrong.diagnosis);
    bool only_digits_off = true;
    for (size_t i = 0; i < got.size(); ++i)
        only_digits_off = only_digits_off && relatively_close(got[i], want[i], 1e-5);
    if (only_digits_off)
        FAIL(
            "your θ are right to only about 6 digits: compute base^(-2(i-1)/d) in double, not float (every θ is graded "
            "to 1e-12 of its own size)");
    for (size_t i = 0; i < got.size(); ++i) {
        INFO(std::setprecision(15) << "θ_" << i << " = base^(-2·" << i << "/" << d << "): expected " << want[i]
                                   << ", got " << got[i]);
        CHECK(relatively_close(got[i], want[i]));
    }
}

// period(θ) against 2π/θ, with the diagnoses of the usual slips.
void check_period(double theta) {
    const double got = ex02::period(theta), want = ref::period(theta);
    INFO(std::setprecision(12) << "period(θ = " << theta << "): expected 2π/θ = " << want << " positions, got " << got);
    if (relatively_close(got, want)) return;
    if (relatively_close(got, 1 / theta, 1e-9))
        FAIL("1/θ is the positions per radian: a full turn is 2π radians, so it takes 2π/θ positions");
    if (relatively_close(got, M_PI / theta, 1e-9)) FAIL("π/θ positions is half a turn: a full turn is 2π radians");
    if (relatively_close(got, theta / (2 * M_PI), 1e-9))
        FAIL("θ/2π is the turns per position (a frequency); the period is the positions per turn, its inverse");
    if (got == std::ceil(want) || got == std::round(want))
        FAIL("your period is rounded to whole positions: 2π/θ is a real number (2π ≈ 6.283 for θ = 1)");
    if (relatively_close(got, want, 1e-2))
        FAIL(
            "your period is close to 2π/θ but not exact: use π to double precision (M_PI or std::acos(-1)), not "
            "a rounded 3.14 or 3.1416");
    FAIL("the period is the number of positions for one full turn of 2π radians");
}

}  // namespace

TEST_CASE("ex02 the lecture's numbers for d = 128") {
    const std::vector<double> thetas = ex02::rope_thetas(128, 10000.0);
    check_thetas(128, 10000.0);
    REQUIRE(thetas.size() == 64);
    {
        INFO("the fastest pair turns 1 radian per position (i = 0 gives base^0), one turn in 2π ≈ 6.28 positions");
        CHECK_CLOSE(thetas.front(), 1.0, 1e-12);
        check_period(thetas.front());
    }
    {
        INFO("the slowest pair: 10000^(-126/128) ≈ 1.15e-4, one turn in ≈ 54,410 positions; got θ_63 = "
             << thetas.back());
        CHECK(relatively_close(thetas.back(), 1.1547819846894583e-4, 1e-9));
        check_period(thetas.back());
        CHECK(std::round(ex02::period(thetas.back())) == 54410);
    }
    {
        const std::vector<double> llama = ex02::rope_thetas(128, 500000.0);
        check_thetas(128, 500000.0);
        INFO("base 500,000 (Llama 3): the slowest period is ≈ 2.56 million positions, got "
             << (llama.empty() ? 0.0 : ex02::period(llama.back())));
        REQUIRE(!llama.empty());
        CHECK(std::fabs(ex02::period(llama.back()) - 2.56e6) < 0.01e6);
    }
}

TEST_CASE("ex02 the smallest heads: one pair (d = 2) and two (d = 4)") {
    const std::vector<double> one = ex02::rope_thetas(2, 10000.0);
    {
        INFO("d = 2 has one pair, θ_1 = 1; got " << grading::str(one));
        CHECK(one == std::vector<double>{1.0});
    }
    check_thetas(4, 10000.0);
    const std::vector<double> two = ex02::rope_thetas(4, 10000.0);
    INFO("d = 4: θ = [1, 10000^(-2/4)] = [1, 0.01]; got " << grading::str(two));
    CHECK(all_relatively_close(two, {1.0, 0.01}));
}

TEST_CASE("ex02 rope_thetas and period equal the reference, relatively, for many d and bases") {
    grading::Random rng(3);
    for (int n = 0; n < 100; ++n) {
        const int64_t d = 2 * rng.integer(1, 128);
        const double base = n % 2 ? rng.uniform(2.0, 1e6) : std::pow(10.0, rng.uniform(0.5, 7.0));
        check_thetas(d, base);
        const std::vector<double> thetas = ex02::rope_thetas(d, base);
        for (size_t i = 0; i + 1 < thetas.size(); ++i) {
            INFO("d = " << d << ", base = " << base << ": θ_" << i + 1 << " = " << thetas[i + 1]
                        << " must be slower than θ_" << i << " = " << thetas[i] << " (the fastest pair first)");
            CHECK(thetas[i + 1] < thetas[i]);
        }
        check_period(rng.uniform(1e-7, 3.0));
        check_period(std::pow(10.0, rng.uniform(-9.0, 0.0)));
    }
}
