// Attempt (wrong): thinks the key must be turned back by its position (R_jᵀ k, "undo the key's position") so
// the two angles subtract; but the dot product already takes R_jᵀ, so the score ends up depending on t + j.
#include "exercises/ex01_rope_by_hand.h"

#include <cmath>

#include "exercises/not_implemented.h"

namespace ex01 {
Vec2 rotate(const Vec2& x, int64_t m, double theta) {
    const double a = static_cast<double>(m) * theta;
    return {std::cos(a) * x[0] - std::sin(a) * x[1], std::sin(a) * x[0] + std::cos(a) * x[1]};
}

double rope_score(const Vec2& q, int64_t t, const Vec2& k, int64_t j, double theta) {
    const Vec2 qt = rotate(q, t, theta), kj = rotate(k, -j, theta);
    return qt[0] * kj[0] + qt[1] * kj[1];
}

}  // namespace ex01
