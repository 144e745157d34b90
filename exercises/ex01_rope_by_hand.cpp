// Exercise 1 · RoPE by hand (lecture §4.4; §10 exercise 1)
//
// With d = 2 there is one pair and one frequency θ. RoPE rotates the query
// by its position t and the key by its position j:
//     q̃_t = R_t q,   k̃_j = R_j k,   R_m = [[cos mθ, -sin mθ], [sin mθ, cos mθ]]
// and the attention score is the dot product q̃_t · k̃_j.
//
// Write rotate() and rope_score() (declared in ex01_rope_by_hand.h).
// By hand first: with θ = 1 and q = k = [1, 0], what is the score at
// (t, j) = (1, 0)? At (5, 4)? Why are they equal (R_jᵀ R_t = R_{t-j})?
//
// Any integer m: m = 0 is no turn, a negative m turns clockwise
// (R_{-m} = R_mᵀ). Any positions t, j ≥ 0: a key may also come after the
// query (j > t, as in an encoder), then t - j is negative.
//
// Graded: the lecture's 0.5403 at (1, 0) and (5, 4), and cos(t - j) for
// q = k = [1, 0], θ = 1; rotate() against R_m x on random inputs, for
// m = 0, negative and large m (a quarter turn takes [1, 0] to [0, 1]), and
// past 2^24 (m = 16777217, where a float no longer holds every integer);
// rope_score() against (R_t q)·(R_j k) on random inputs, unchanged when both
// positions shift, for j < t, j = t and j > t; each call with its own θ. A
// wrong answer that matches a known wrong turn (clockwise, no turn or |m| for
// m < 0, only one vector rotated, both by t - j as on the §4.3 slide, the
// relative angle's sign flipped, cos((t - j)θ)·q·k, a float angle, a
// position rounded to float, θ kept from an earlier call) is named in the
// message, and a wrong score whose rotate() is wrong names the rotation
// first.
#include "exercises/ex01_rope_by_hand.h"

#include <cmath>

#include "exercises/not_implemented.h"

namespace ex01 {

Vec2 rotate(const Vec2& x, int64_t m, double theta) {
    // TODO: R_m x
    (void)x, (void)m, (void)theta;
    throw exercises::not_implemented("ex01 rope_by_hand: rotate");
}

double rope_score(const Vec2& q, int64_t t, const Vec2& k, int64_t j, double theta) {
    // TODO: (R_t q) · (R_j k)
    (void)q, (void)t, (void)k, (void)j, (void)theta;
    throw exercises::not_implemented("ex01 rope_by_hand: rope_score");
}

}  // namespace ex01
