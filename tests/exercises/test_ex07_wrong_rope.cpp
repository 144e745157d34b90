// Exercise 7 · the slides' "wrong" RoPE (§4.3): rotate() against the
// slides' R_{Θ,m} (d = 2 by hand; then one pair at a time, measuring the
// angle each pair is turned by, which diagnoses the other pairing,
// clockwise turns, positions from 1 and the usual slips in θ_i =
// base^(-2(i-1)/d); then random vectors against the reference, and a
// position past 2^24 that a float would round), RoPE's score
// (the reference for any base, depends on t - j only; diagnoses a key
// turned by the distance and a score with no rotation left) and the wrong
// version's blindness to position.
#include <cmath>
#include <iomanip>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "exercises/ex07_wrong_rope.h"
#include "grading_checks.h"
#include "reference/ex07_wrong_rope.h"

namespace ref = ex07_reference;

namespace {

ex07::Vec random_vec(grading::Random& rng, size_t d) {
    ex07::Vec v(d);
    for (double& x : v) x = rng.normal();
    return v;
}

double dot(const ex07::Vec& a, const ex07::Vec& b) {
    double s = 0;
    for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
    return s;
}

// The other pairing (i with i + d/2, as ag::rope's default "half") — a
// common slip when the slides' interleaved form is asked for.
ex07::Vec rotate_half_pairing(const ex07::Vec& x, int64_t m, double base) {
    const size_t d = x.size(), h = d / 2;
    ex07::Vec out(d);
    for (size_t i = 0; i < h; ++i) {
        const double a =
            static_cast<double>(m) * std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(d));
        out[i] = x[i] * std::cos(a) - x[i + h] * std::sin(a);
        out[i + h] = x[i] * std::sin(a) + x[i + h] * std::cos(a);
    }
    return out;
}

// Each pair turned in place: the second coordinate computed from the first
// one already turned (x_2i' sin + x_2i+1 cos).
ex07::Vec rotate_in_place(const ex07::Vec& x, int64_t m, double base) {
    ex07::Vec out = x;
    for (size_t i = 0; i < x.size() / 2; ++i) {
        const double a =
            static_cast<double>(m) * std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(x.size()));
        out[2 * i] = out[2 * i] * std::cos(a) - out[2 * i + 1] * std::sin(a);
        out[2 * i + 1] = out[2 * i] * std::sin(a) + out[2 * i + 1] * std::cos(a);
    }
    return out;
}

// θ_i = base^(-2(i-1)/d), i = 1 … d/2 (§4.2), and the slips a student makes
// writing it down, each as θ(i) for a vector of size d; here, as in the
// code below, i counts pairs from 0 (pair i is the lecture's pair i+1).
double theta(size_t i, size_t d, double base) {
    return std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(d));
}

// What went wrong in θ when the pairs of a d-vector turned by `angles` at
// m = 1 instead of θ_1, θ_2, … ("" when no known slip explains them all).
// The whole pattern is matched, since one pair alone can fit two slips
// (at d = 4, pair 0 turned by base^(-1/2) fits both pairs counted from 1 and
// the frequencies in reverse order). `earlier` is a base that rotate() was
// called with at this d just before.
std::string theta_slip(const std::vector<double>& angles, size_t d, double base, double earlier) {
    const double dd = static_cast<double>(d);
    const auto all = [&](auto&& want) {
        for (size_t i = 0; i < angles.size(); ++i)
            if (!grading::close(angles[i], want(static_cast<double>(i)), 1e-9)) return false;
        return true;
    };
    if (all([&](double i) { return -std::pow(base, -2.0 * i / dd); }))
        return "you turned clockwise: the angle is +m·θ_i (R = [[cos, -sin], [sin, cos]])";
    if (all([&](double i) { return 2.0 * std::pow(base, -2.0 * i / dd); }))
        return "pair i turned by 2θ_i at m = 1: positions start at 0, turn by m·θ_i";
    if (all([&](double i) { return std::pow(base, -i / dd); }))
        return "you used θ_i = base^(-(i-1)/d): the exponent is -2(i-1)/d";
    if (all([&](double i) { return std::pow(base, -4.0 * i / dd); }))
        return "you used the first dimension's index 2(i-1) (from 0) in place of i-1: θ_i = base^(-2(i-1)/d) for pair "
               "i";
    if (all([&](double i) { return std::pow(base, -2.0 * (i + 1) / dd); }))
        return "you used the exponent -2i/d: the first pair has θ_1 = base^0 = 1, the exponent is -2(i-1)/d";
    if (all([&](double i) { return std::pow(base, -2.0 * (dd / 2 - 1 - i) / dd); }))
        return "your frequencies run the other way: the first pair turns fastest (θ_1 = 1) and the last pair slowest";
    if (all([&](double i) { return std::pow(10000.0, -2.0 * i / dd); }))
        return "you ignored the base argument and used 10000";
    if (earlier > 0 && all([&](double i) { return std::pow(earlier, -2.0 * i / dd); })) {
        std::ostringstream out;
        out << "your frequencies are those of the base of the previous call (" << earlier
            << "), not of this one: is something kept between calls? rotate() must depend on its arguments only";
        return out.str();
    }
    if (all([](double) { return 1.0; }))
        return "every pair turned by 1 rad: integer division in -2(i-1)/d? (compute it in double)";
    return "";
}

}  // namespace

TEST_CASE("ex07 d = 2 by hand: θ_1 = 1 for any base, rotate([1, 0], m) = [cos m, sin m]") {
    for (const double base : {10000.0, 2.0, 500000.0})
        for (int64_t m = 0; m <= 12; ++m) {
            const ex07::Vec got = ex07::rotate({1.0, 0.0}, m, base);
            const ex07::Vec want{std::cos(static_cast<double>(m)), std::sin(static_cast<double>(m))};
            INFO("rotate([1, 0], m = " << m << ", base = " << base << "): the only pair has θ_1 = base^0 = 1, so "
                                       << "expected " << grading::str(want) << ", got " << grading::str(got));
            REQUIRE(got.size() == 2);
            const auto turned_by = [](double a) { return ex07::Vec{std::cos(a), std::sin(a)}; };
            const double mm = static_cast<double>(m);
            if (m != 0 && grading::same_values(got, turned_by(-mm), 1e-9))
                FAIL("you turned clockwise: R = [[cos, -sin], [sin, cos]] turns [1, 0] towards [0, 1]");
            if (grading::same_values(got, turned_by(mm + 1), 1e-9))
                FAIL("you turned by (m + 1)·θ: positions start at 0, and position m turns by m·θ_i");
            if (m != 0 && grading::same_values(got, rotate_in_place({1.0, 0.0}, m, base), 1e-9))
                FAIL(
                    "the second coordinate was computed from the first one already turned: both new coordinates "
                    "come from the old pair (x_2i, x_2i+1)");
            if (!grading::same_values(got, want, 1e-9) && grading::close(got[0], want[0], 1e-5) &&
                grading::close(got[1], want[1], 1e-5))
                FAIL("right to about 7 digits only: is the angle or its sine computed in float? Use double");
            CHECK(grading::same_values(got, want, 1e-9));
        }
    for (int64_t m = 1; m <= 12; ++m) {
        const ex07::Vec got = ex07::rotate({0.0, 1.0}, m, 10000.0);
        const double mm = static_cast<double>(m);
        const ex07::Vec want{-std::sin(mm), std::cos(mm)};
        INFO("rotate([0, 1], m = " << m << "): [x_0, x_1] -> [x_0 cos m - x_1 sin m, x_0 sin m + x_1 cos m] = "
                                   << grading::str(want) << ", got " << grading::str(got)
                                   << " (check the signs of the x_1 terms)");
        REQUIRE(got.size() == 2);
        CHECK(grading::same_values(got, want, 1e-9));
    }
    // Exercise 1's numbers (§4.4): q = k = [1, 0] at (1, 0) and at (5, 4) both score cos 1.
    INFO("q = k = [1, 0], d = 2: rope_score at (t, j) = (1, 0) and (5, 4) is cos(1) = 0.5403 (exercise 1)");
    const double s10 = ex07::rope_score({1, 0}, 1, {1, 0}, 0, 10000.0);
    if (grading::close(s10 * std::sqrt(2.0), std::cos(1.0), 1e-12))
        FAIL(
            "your score is cos(1)/sqrt(2): rope_score is the plain dot product (R_t q)·(R_j k), without "
            "attention's 1/sqrt(d)");
    CHECK_CLOSE(ex07::rope_score({1, 0}, 1, {1, 0}, 0, 10000.0), std::cos(1.0), 1e-12);
    CHECK_CLOSE(ex07::rope_score({1, 0}, 5, {1, 0}, 4, 10000.0), std::cos(1.0), 1e-12);
}

// §4.2: R_{Θ,m} is block diagonal, so e_{2i} (a one in dimension 2i) may
// only move within pair i: rotate(e_{2i}, 1) = cos θ_i e_{2i} + sin θ_i e_{2i+1}.
// Reading the angle back tells which part of the formula went wrong.
TEST_CASE("ex07 rotate() turns pair (2i-1, 2i) by m·θ_i, θ_i = base^(-2(i-1)/d), and touches nothing else") {
    for (const size_t d : {2, 4, 6, 8, 16, 64}) {
        double earlier = 0;
        for (const double base : {37.0, 10000.0}) {
            std::vector<double> angles;
            for (size_t i = 0; i < d / 2; ++i) {
                ex07::Vec e(d, 0.0);
                e[2 * i] = 1.0;
                const ex07::Vec got = ex07::rotate(e, 1, base);
                INFO("d = " << d << ", base = " << base << ", x = e_" << 2 * i << " (a one in dimension " << 2 * i
                            << "), m = 1\n got " << grading::str(got));
                REQUIRE(got.size() == d);
                for (size_t k = 0; k < d; ++k)
                    if (k != 2 * i && k != 2 * i + 1 && std::fabs(got[k]) > 1e-12)
                        FAIL("dimension " << k << " changed: the slides pair dimension 2i with 2i+1 (here " << 2 * i
                                          << " with " << 2 * i + 1 << "); pairing i with i + d/2 is the other layout");
                INFO("a rotation keeps the length: |rotate(e)| must be 1");
                CHECK_CLOSE(dot(got, got), 1.0, 1e-12);
                angles.push_back(std::atan2(got[2 * i + 1], got[2 * i]));
            }
            const std::string slip = theta_slip(angles, d, base, earlier);
            for (size_t i = 0; i < d / 2; ++i) {
                const double want = theta(i, d, base);
                INFO("d = " << d << ", base = " << base << ": pair " << i << " was turned by " << angles[i]
                            << " rad at m = 1; θ_" << i << " = base^(-2·" << i << "/" << d << ") = " << want);
                if (!grading::close(angles[i], want, 1e-9) && !slip.empty()) FAIL(slip);
                if (!grading::close(angles[i], want, 1e-9) && grading::close(angles[i], want, 1e-6))
                    FAIL("θ_" << i << " is right to about 7 digits only (" << std::setprecision(12) << angles[i]
                              << " rad, θ_" << i << " = " << want
                              << "): is it computed or kept in float? m·θ_i multiplies its error by m; use double");
                CHECK_CLOSE(angles[i], want, 1e-9);
            }
            earlier = base;
        }
    }
}

TEST_CASE("ex07 rotate() is the slides' R_{Θ,m} x") {
    grading::Random rng(8);
    for (int n = 0; n < 200; ++n) {
        const size_t d = 2 * static_cast<size_t>(rng.integer(1, 32));
        const ex07::Vec x = random_vec(rng, d);
        const int64_t m = n % 5 ? rng.integer(0, 500) : rng.integer(0, 100000);
        const double base = n % 2 ? 10000.0 : rng.uniform(10.0, 1e5);
        const ex07::Vec got = ex07::rotate(x, m, base), want = ref::rotate(x, m, base);
        INFO("d = " << d << ", m = " << m << ", base = " << base << "\n x = " << grading::str(x) << "\n expected "
                    << grading::str(want) << "\n got      " << grading::str(got));
        REQUIRE(got.size() == d);
        if (!grading::same_values(got, want, 1e-9)) {
            if (d > 2 && grading::same_values(got, rotate_half_pairing(x, m, base), 1e-9))
                FAIL("you paired dimension i with i + d/2; the slides pair 2i with 2i+1");
            if (grading::same_values(got, ref::rotate(x, -m, base), 1e-9))
                FAIL("you turned clockwise: the angle is +m·θ_i");
            if (grading::same_values(got, ref::rotate(x, m + 1, base), 1e-9) ||
                grading::same_values(got, ref::rotate(x, m - 1, base), 1e-9))
                FAIL("off by one in the position: turn by m·θ_i, positions start at 0");
            if (m == 0 && !grading::same_values(got, x, 1e-9))
                FAIL("at m = 0 every angle is 0: rotate(x, 0) must return x unchanged");
        }
        REQUIRE(grading::same_values(got, want, 1e-9));
        INFO("a rotation keeps the length");
        CHECK_CLOSE(dot(got, got), dot(x, x), 1e-9);
    }
}

// §4.7 RoPE has no max_len: any integer position. A float holds every
// integer exactly only up to 2^24 = 16777216 (a double up to 2^53), so a
// position rounded to float turns pair i by a whole θ_i too little at m =
// 2^24 + 1 (1 rad for the first pair). An angle mθ_i near 10^7 is itself
// good to ~1e-9 rad in double, however it is computed: tolerance 1e-7.
TEST_CASE("ex07 rotate() at a position past 2^24 = 16777216") {
    const int64_t far = (int64_t{1} << 24) + 1;
    grading::Random rng(11);
    for (const auto& [d, m] : std::vector<std::pair<size_t, int64_t>>{{2, far}, {4, far}, {8, far + 2}}) {
        const ex07::Vec x = d == 2 ? ex07::Vec{1.0, 0.0} : random_vec(rng, d);
        const ex07::Vec got = ex07::rotate(x, m, 10000.0), want = ref::rotate(x, m, 10000.0);
        INFO("d = " << d << ", m = " << m << ", base = 10000\n x = " << grading::str(x) << "\n expected "
                    << grading::str(want) << "\n got      " << grading::str(got));
        REQUIRE(got.size() == d);
        const auto m_as_float = static_cast<int64_t>(static_cast<float>(m));
        if (!grading::same_values(got, want, 1e-7) &&
            grading::same_values(got, ref::rotate(x, m_as_float, 10000.0), 1e-7))
            FAIL(
                "the position went through a float: a float holds the integers exactly only up to 2^24 = 16777216, "
                "so m = "
                << m << " became " << m_as_float << " and every pair turns " << m - m_as_float
                << "·θ_i short; convert m to double (exact up to 2^53): static_cast<double>(m) * θ_i");
        CHECK(grading::same_values(got, want, 1e-7));
    }
}

// §4.4: (R_t q)·(R_j k) = qᵀR_tᵀR_j k = qᵀR_{j-t} k. Positions are absolute
// and either may come first; any base (Llama 3 uses 500,000).
TEST_CASE("ex07 rope_score equals the reference for any base and depends on t - j only") {
    grading::Random rng(9);
    for (int n = 0; n < 200; ++n) {
        const size_t d = 2 * static_cast<size_t>(rng.integer(1, 16));
        const ex07::Vec q = random_vec(rng, d), k = random_vec(rng, d);
        const int64_t t = rng.integer(0, 300), j = n % 4 ? rng.integer(0, t) : rng.integer(0, 300),
                      shift = rng.integer(1, 1000);
        const double base = n % 2 ? 10000.0 : rng.uniform(2.0, 1e6);
        INFO("d = " << d << ", t = " << t << ", j = " << j << ", base = " << base << "\n q = " << grading::str(q)
                    << "\n k = " << grading::str(k));
        const double got = ex07::rope_score(q, t, k, j, base), want = ref::rope_score(q, t, k, j, base);
        if (t != j && !grading::close(got, want, 1e-9)) {
            if (grading::close(got, dot(q, k), 1e-9))
                FAIL("your score is the unrotated q·k: turn q by its position t and k by its position j");
            if (grading::close(got, dot(ref::rotate(q, t, base), k), 1e-9))
                FAIL("you turned q by t but left k as it is: k is turned by its own position j");
            if (base != 10000.0 && grading::close(got, ref::rope_score(q, t, k, j, 10000.0), 1e-9))
                FAIL("your score used base 10000, not the base it was given (" << base
                                                                               << "): pass base on to rotate()");
            if (grading::close(got, dot(q, ref::rotate(k, t - j, base)), 1e-9))
                FAIL(
                    "your score is qᵀR_{t-j} k, what turning k by the distance t - j (or q by j and k by t) gives; "
                    "but (R_t q)·(R_j k) = qᵀR_{j-t} k: turn q by its own position t and k by its own j");
        }
        CHECK_CLOSE(got, want, 1e-9);
        INFO("shifting both positions by " << shift << " must not change the score (R_tᵀR_j = R_{j-t})");
        CHECK_CLOSE(ex07::rope_score(q, t + shift, k, j + shift, base), got, 1e-8);
    }
}

// §4.3: both turned by the same R = R_{t-j}, and (Rq)·(Rk) = qᵀRᵀRk = q·k.
TEST_CASE("ex07 the wrong version is exactly the unrotated score") {
    grading::Random rng(10);
    for (int n = 0; n < 200; ++n) {
        const size_t d = 2 * static_cast<size_t>(rng.integer(1, 16));
        const ex07::Vec q = random_vec(rng, d), k = random_vec(rng, d);
        const int64_t t = rng.integer(1, 1000), j = rng.integer(0, t - 1);
        const double base = n % 2 ? 10000.0 : rng.uniform(2.0, 1e6);
        const double got = ex07::wrong_score(q, t, k, j, base);
        INFO("d = " << d << ", t = " << t << ", j = " << j << ", base = " << base << "\n q = " << grading::str(q)
                    << "\n k = " << grading::str(k));
        if (!grading::close(got, dot(q, k), 1e-9) && grading::close(got, ref::rope_score(q, t, k, j, base), 1e-9))
            FAIL(
                "your wrong_score equals RoPE's score (R_t q)·(R_j k) = (R_{t-j} q)·k; the slides' version turns "
                "BOTH q and k by the same t - j");
        if (grading::close(got, dot(ref::rotate(q, t - j, base), ref::rotate(k, j - t, base)), 1e-9))
            FAIL(
                "you turned q by t - j and k back by j - t: opposite turns add up; the slides' version turns both by "
                "the same R_{t-j}");
        if (grading::close(got * std::sqrt(static_cast<double>(d)), dot(q, k), 1e-9))
            FAIL("your score is q·k / sqrt(d): wrong_score is the plain dot product (R_{t-j} q)·(R_{t-j} k)");
        INFO("(R_{t-j} q)·(R_{t-j} k) = qᵀRᵀR k = q·k = " << dot(q, k) << ": the same rotation on both cancels");
        CHECK_CLOSE(got, dot(q, k), 1e-9);
        CHECK_CLOSE(got, ref::wrong_score(q, t, k, j, base), 1e-9);
    }
}
