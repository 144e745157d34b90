// Attempt (right): uses R_jᵀR_t = R_{t-j} (§4.4) so that only the query is turned, by the signed offset
// t - j, and dotted with the unturned key; rotate() reduces the angle to (-π, π] first with std::remainder.
#include "exercises/ex01_rope_by_hand.h"

#include <cmath>

#include "exercises/not_implemented.h"

namespace ex01 {

Vec2 rotate(const Vec2& x, int64_t m, double theta) {
    const double a = std::remainder(static_cast<double>(m) * theta, 2.0 * 3.14159265358979323846);
    const double c = std::cos(a), s = std::sin(a);
    return {c * x[0] - s * x[1], s * x[0] + c * x[1]};
}

double rope_score(const Vec2& q, int64_t t, const Vec2& k, int64_t j, double theta) {
    const Vec2 turned = rotate(q, t - j, theta);
    return k[0] * turned[0] + k[1] * turned[1];
}

}  // namespace ex01
