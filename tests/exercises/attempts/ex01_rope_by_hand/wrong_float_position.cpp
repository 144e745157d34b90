// Attempt (wrong): stores the position in a float, as a GPU kernel's angle table often does ("positions
// are small integers, a float holds them exactly"); the angle itself is computed in double. A float holds
// every integer only up to 2^24 = 16777216: past it the position is rounded, and the turn is off by
// whole radians.
// grade says: the position went through a float
#include "exercises/ex01_rope_by_hand.h"

#include <cmath>

#include "exercises/not_implemented.h"

namespace ex01 {

Vec2 rotate(const Vec2& x, int64_t m, double theta) {
    const float position = static_cast<float>(m);
    const double angle = static_cast<double>(position) * theta, c = std::cos(angle), s = std::sin(angle);
    return {c * x[0] - s * x[1], s * x[0] + c * x[1]};
}

double rope_score(const Vec2& q, int64_t t, const Vec2& k, int64_t j, double theta) {
    const Vec2 qt = rotate(q, t, theta), kj = rotate(k, j, theta);
    return qt[0] * kj[0] + qt[1] * kj[1];
}

}  // namespace ex01
