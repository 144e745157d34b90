// Exercise 1 · RoPE by hand: reference solution (lecture §4.4).
#include "exercises/ex01_rope_by_hand.h"

#include <cmath>

namespace ex01 {

Vec2 rotate(const Vec2& x, int64_t m, double theta) {
    const double angle = static_cast<double>(m) * theta, c = std::cos(angle), s = std::sin(angle);
    return {c * x[0] - s * x[1], s * x[0] + c * x[1]};
}

double rope_score(const Vec2& q, int64_t t, const Vec2& k, int64_t j, double theta) {
    const Vec2 qt = rotate(q, t, theta), kj = rotate(k, j, theta);
    return qt[0] * kj[0] + qt[1] * kj[1];
}

}  // namespace ex01
