// Exercise 7 · the slides' "wrong" RoPE (§4.3): rotate() against the
// reference (diagnosing the other pairing and clockwise turns), RoPE's
// relative scores, and the wrong version's blindness to position.
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
        const double a = static_cast<double>(m) * std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(d));
        out[i] = x[i] * std::cos(a) - x[i + h] * std::sin(a);
        out[i + h] = x[i] * std::sin(a) + x[i + h] * std::cos(a);
    }
    return out;
}

bool same(const ex07::Vec& a, const ex07::Vec& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (!grading::close(a[i], b[i], 1e-9)) return false;
    return true;
}

}  // namespace

TEST_CASE("ex07 rotate() is the slides' R_{Θ,m} x") {
    grading::Random rng(8);
    for (int n = 0; n < 200; ++n) {
        const size_t d = 2 * static_cast<size_t>(rng.integer(2, 32));
        const ex07::Vec x = random_vec(rng, d);
        const int64_t m = rng.integer(1, 500);
        const double base = n % 2 ? 10000.0 : rng.uniform(10.0, 1e5);
        const ex07::Vec got = ex07::rotate(x, m, base), want = ref::rotate(x, m, base);
        INFO("d = " << d << ", m = " << m << ", base = " << base << "\n x = " << grading::str(x)
                    << "\n expected " << grading::str(want) << "\n got      " << grading::str(got));
        REQUIRE(got.size() == d);
        if (same(got, rotate_half_pairing(x, m, base)))
            FAIL("you paired dimension i with i + d/2; the slides pair 2i with 2i+1");
        if (same(got, ref::rotate(x, -m, base))) FAIL("you turned clockwise: the angle is +m·θ_i");
        if (same(got, ref::rotate(x, m + 1, base)) || same(got, ref::rotate(x, m - 1, base)))
            FAIL("off by one in the position: turn by m·θ_i, positions start at 0");
        CHECK(same(got, want));
        INFO("a rotation keeps the length");
        CHECK_CLOSE(dot(got, got), dot(x, x), 1e-9);
    }
}

TEST_CASE("ex07 rope_score depends on t - j only and equals the reference") {
    grading::Random rng(9);
    for (int n = 0; n < 200; ++n) {
        const size_t d = 2 * static_cast<size_t>(rng.integer(1, 16));
        const ex07::Vec q = random_vec(rng, d), k = random_vec(rng, d);
        const int64_t t = rng.integer(0, 300), j = rng.integer(0, t), shift = rng.integer(1, 1000);
        INFO("d = " << d << ", t = " << t << ", j = " << j << ", shift " << shift);
        const double got = ex07::rope_score(q, t, k, j, 10000.0);
        CHECK_CLOSE(got, ref::rope_score(q, t, k, j, 10000.0), 1e-9);
        CHECK_CLOSE(ex07::rope_score(q, t + shift, k, j + shift, 10000.0), got, 1e-8);
    }
}

TEST_CASE("ex07 the wrong version is exactly the unrotated score") {
    grading::Random rng(10);
    for (int n = 0; n < 200; ++n) {
        const size_t d = 2 * static_cast<size_t>(rng.integer(1, 16));
        const ex07::Vec q = random_vec(rng, d), k = random_vec(rng, d);
        const int64_t t = rng.integer(0, 1000), j = rng.integer(0, t);
        INFO("d = " << d << ", t = " << t << ", j = " << j << ": (R q)·(R k) = qᵀRᵀR k = q·k");
        CHECK_CLOSE(ex07::wrong_score(q, t, k, j, 10000.0), dot(q, k), 1e-9);
        CHECK_CLOSE(ex07::wrong_score(q, t, k, j, 10000.0), ref::wrong_score(q, t, k, j, 10000.0), 1e-9);
    }
}
