// Attempt (wrong): rotates the vector in place, component by component, so the second component is computed
// from the already rotated first one instead of the original x_0.
#include "exercises/ex01_rope_by_hand.h"

#include <cmath>

#include "exercises/not_implemented.h"

namespace ex01 {

Vec2 rotate(const Vec2& x, int64_t m, double theta) {
    const double a = static_cast<double>(m) * theta;
    Vec2 r = x;
    r[0] = std::cos(a) * r[0] - std::sin(a) * r[1];
    r[1] = std::sin(a) * r[0] + std::cos(a) * r[1];
    return r;
}

double rope_score(const Vec2& q, int64_t t, const Vec2& k, int64_t j, double theta) {
    const Vec2 qt = rotate(q, t, theta), kj = rotate(k, j, theta);
    return qt[0] * kj[0] + qt[1] * kj[1];
}

}  // namespace ex01
