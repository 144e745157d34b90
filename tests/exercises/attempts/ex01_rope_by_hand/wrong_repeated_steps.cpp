// Attempt (wrong): builds R_m as m steps of R_1 (a loop of m single turns), which does nothing for a negative
// m: R_{-m} is m turns the other way (R_mᵀ), not the identity.
#include "exercises/ex01_rope_by_hand.h"

#include <cmath>

#include "exercises/not_implemented.h"

namespace ex01 {

Vec2 rotate(const Vec2& x, int64_t m, double theta) {
    const double c = std::cos(theta), s = std::sin(theta);
    Vec2 v = x;
    for (int64_t step = 0; step < m; ++step) v = {c * v[0] - s * v[1], s * v[0] + c * v[1]};
    return v;
}

double rope_score(const Vec2& q, int64_t t, const Vec2& k, int64_t j, double theta) {
    const Vec2 a = rotate(q, t, theta), b = rotate(k, j, theta);
    return a[0] * b[0] + a[1] * b[1];
}

}  // namespace ex01
