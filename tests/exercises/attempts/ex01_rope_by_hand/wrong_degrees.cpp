// Attempt (wrong): reads the angle mθ in degrees, as on a protractor, and converts it to radians before
// taking cos and sin, so θ = 1 turns by one degree per position instead of one radian.
#include "exercises/ex01_rope_by_hand.h"

#include <cmath>

#include "exercises/not_implemented.h"

namespace ex01 {

Vec2 rotate(const Vec2& x, int64_t m, double theta) {
    const double degrees = static_cast<double>(m) * theta;
    const double a = degrees * 3.14159265358979323846 / 180.0;
    return {std::cos(a) * x[0] - std::sin(a) * x[1], std::sin(a) * x[0] + std::cos(a) * x[1]};
}

double rope_score(const Vec2& q, int64_t t, const Vec2& k, int64_t j, double theta) {
    const Vec2 qt = rotate(q, t, theta), kj = rotate(k, j, theta);
    return qt[0] * kj[0] + qt[1] * kj[1];
}

}  // namespace ex01
