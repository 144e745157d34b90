// Exercise 7 · the slides' "wrong" RoPE (lecture §4.3; §10 exercise 7)
//
// RoPE turns the query by its own position and the key by its own:
//     score(t, j) = (R_t q) · (R_j k) = qᵀ R_tᵀ R_j k = qᵀ R_{j-t} k,
// which depends on t - j only. One version on the slides instead turns
// BOTH q and k by t - j. Prove that multiplying both by the same rotation
// R leaves the dot product unchanged ((Rq)·(Rk) = qᵀRᵀRk, and RᵀR = I),
// and see what that means for that version: it carries no position at all.
//
// Write rotate(), rope_score() and wrong_score() (ex07_wrong_rope.h). Use
// the slides' pairing: dimensions (1, 2), (3, 4), … (x[0], x[1], … in
// code), pair i = 1 … d/2 turned by m·θ_i, θ_i = base^(-2(i-1)/d):
//     [x_{2i-1}, x_2i] -> [x_{2i-1} cos mθ_i - x_2i sin mθ_i,  x_{2i-1} sin mθ_i + x_2i cos mθ_i].
//
// Graded: rotate() by hand at d = 2 ([1, 0] and [0, 1]; θ_1 = 1 for any
// base; to double precision), then one pair at a time (e_2i may only move
// within dims 2i, 2i+1, turned by exactly θ_i at m = 1, for several d and
// bases; the usual slips are named: the other pairing, clockwise turns,
// positions from 1, base^(-(i-1)/d), the dimension index in place of the
// pair index, the exponent -2i/d or pairs in reverse order, a fixed base
// 10000, integer division), then against the reference for random x, m up
// to 100,000 and m = 0, and it keeps the length; at m = 2^24 + 1 =
// 16777217, past the integers a float holds exactly (a position rounded to
// float is named); rope_score() (the plain dot product, no 1/sqrt(d))
// against the reference for any base and either order of t, j, and
// unchanged when both positions shift; wrong_score() equals the unrotated
// q · k for random q, k, t > j, bases. Every result depends on the
// arguments only.
#include "exercises/ex07_wrong_rope.h"

#include <cmath>

#include "exercises/not_implemented.h"

namespace ex07 {

Vec rotate(const Vec& x, int64_t m, double base) {
    // TODO
    (void)x, (void)m, (void)base;
    throw exercises::not_implemented("ex07 wrong_rope: rotate");
}

double rope_score(const Vec& q, int64_t t, const Vec& k, int64_t j, double base) {
    // TODO
    (void)q, (void)t, (void)k, (void)j, (void)base;
    throw exercises::not_implemented("ex07 wrong_rope: rope_score");
}

double wrong_score(const Vec& q, int64_t t, const Vec& k, int64_t j, double base) {
    // TODO
    (void)q, (void)t, (void)k, (void)j, (void)base;
    throw exercises::not_implemented("ex07 wrong_rope: wrong_score");
}

}  // namespace ex07
