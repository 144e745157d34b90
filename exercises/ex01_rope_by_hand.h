#pragma once
// Exercise 1 · RoPE by hand (lecture §4.4, exercise 1). The statement is in
// ex01_rope_by_hand.cpp, where you write the answer.
#include <array>
#include <cstdint>

namespace ex01 {

using Vec2 = std::array<double, 2>;

// x rotated counter-clockwise by the angle m·θ: R_m x with
// R_m = [[cos mθ, -sin mθ], [sin mθ, cos mθ]].
Vec2 rotate(const Vec2& x, int64_t m, double theta);

// The RoPE attention score of a query q at position t and a key k at
// position j, with one frequency θ: (R_t q) · (R_j k).
double rope_score(const Vec2& q, int64_t t, const Vec2& k, int64_t j, double theta);

}  // namespace ex01
