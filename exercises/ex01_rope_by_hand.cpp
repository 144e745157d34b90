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
// Graded: rotate() and rope_score() against the reference on random
// inputs; the lecture's 0.5403 at (1, 0) and (5, 4); score == cos(t - j)
// for q = k = [1, 0], θ = 1.
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
