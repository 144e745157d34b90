// Exercise 1 · RoPE by hand (§4.4): the student's rotate() and rope_score()
// against the reference, the lecture's numbers, and the usual wrong turn
// (rotating clockwise).
#include "exercises/ex01_rope_by_hand.h"
#include "grading_checks.h"
#include "reference/ex01_rope_by_hand.h"

namespace ref = ex01_reference;

TEST_CASE("ex01 the lecture's numbers: 0.5403 at (1, 0) and at (5, 4)") {
    const ex01::Vec2 q{1, 0}, k{1, 0};
    CHECK_CLOSE(ex01::rope_score(q, 1, k, 0, 1.0), std::cos(1.0), 1e-12);
    CHECK_CLOSE(ex01::rope_score(q, 5, k, 4, 1.0), 0.5403023058681398, 1e-12);
    for (int64_t t = 0; t < 20; ++t)
        for (int64_t j = 0; j <= t; ++j) {
            INFO("q = k = [1, 0], θ = 1, t = " << t << ", j = " << j << ": the score must be cos(t - j)");
            CHECK_CLOSE(ex01::rope_score(q, t, k, j, 1.0), std::cos(static_cast<double>(t - j)), 1e-12);
        }
}

TEST_CASE("ex01 rotate() is R_m x, counter-clockwise") {
    grading::Random rng(1);
    for (int n = 0; n < 200; ++n) {
        const ex01::Vec2 x{rng.normal(), rng.normal()};
        const int64_t m = rng.integer(-60, 60);
        const double theta = rng.uniform(0.01, 2.0);
        const ex01::Vec2 got = ex01::rotate(x, m, theta), want = ref::rotate(x, m, theta);
        const ex01::Vec2 clockwise = ref::rotate(x, -m, theta);
        INFO("x = " << grading::str(x) << ", m = " << m << ", θ = " << theta << ": expected " << grading::str(want)
                    << ", got " << grading::str(got));
        if (m != 0 && grading::close(got[0], clockwise[0]) && grading::close(got[1], clockwise[1]))
            FAIL("you rotated clockwise: R_m = [[cos mθ, -sin mθ], [sin mθ, cos mθ]] turns [1, 0] towards [0, 1]");
        CHECK(grading::close(got[0], want[0]));
        CHECK(grading::close(got[1], want[1]));
    }
}

TEST_CASE("ex01 rope_score() equals the reference and depends only on t - j") {
    grading::Random rng(2);
    for (int n = 0; n < 200; ++n) {
        const ex01::Vec2 q{rng.normal(), rng.normal()}, k{rng.normal(), rng.normal()};
        const int64_t t = rng.integer(0, 2000), j = rng.integer(0, t), shift = rng.integer(1, 1000);
        const double theta = rng.uniform(0.01, 2.0);
        INFO("q = " << grading::str(q) << ", k = " << grading::str(k) << ", t = " << t << ", j = " << j
                    << ", θ = " << theta);
        const double got = ex01::rope_score(q, t, k, j, theta);
        CHECK_CLOSE(got, ref::rope_score(q, t, k, j, theta), 1e-9);
        INFO("shifting both positions by " << shift << " must not change the score (R_jᵀR_t = R_{t-j})");
        CHECK_CLOSE(ex01::rope_score(q, t + shift, k, j + shift, theta), got, 1e-9);
    }
}
