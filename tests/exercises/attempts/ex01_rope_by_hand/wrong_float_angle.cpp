// Attempt (wrong): keeps the angle in float ("a rotation only needs a few digits"), so for a large position
// m the product mθ loses its fractional part and the turn is off by a large fraction of a radian.
#include "exercises/ex01_rope_by_hand.h"

#include <cmath>

#include "exercises/not_implemented.h"

namespace ex01 {

Vec2 rotate(const Vec2& x, int64_t m, double theta) {
    const float a = static_cast<float>(m) * static_cast<float>(theta);
    const double c = static_cast<double>(std::cos(a)), s = static_cast<double>(std::sin(a));
    return {c * x[0] - s * x[1], s * x[0] + c * x[1]};
}

double rope_score(const Vec2& q, int64_t t, const Vec2& k, int64_t j, double theta) {
    const Vec2 qt = rotate(q, t, theta), kj = rotate(k, j, theta);
    return qt[0] * kj[0] + qt[1] * kj[1];
}

}  // namespace ex01
