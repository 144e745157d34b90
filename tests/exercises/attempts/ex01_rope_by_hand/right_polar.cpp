// Attempt (right): works in polar form: a rotation adds mθ to the angle atan2(x_1, x_0) and keeps the length,
// and the score is |q||k| cos(φ_q + tθ - φ_k - jθ).
#include "exercises/ex01_rope_by_hand.h"

#include <cmath>

#include "exercises/not_implemented.h"

namespace ex01 {

Vec2 rotate(const Vec2& x, int64_t m, double theta) {
    const double r = std::hypot(x[0], x[1]);
    const double phi = std::atan2(x[1], x[0]) + static_cast<double>(m) * theta;
    return {r * std::cos(phi), r * std::sin(phi)};
}

double rope_score(const Vec2& q, int64_t t, const Vec2& k, int64_t j, double theta) {
    const double phi_q = std::atan2(q[1], q[0]) + static_cast<double>(t) * theta;
    const double phi_k = std::atan2(k[1], k[0]) + static_cast<double>(j) * theta;
    return std::hypot(q[0], q[1]) * std::hypot(k[0], k[1]) * std::cos(phi_q - phi_k);
}

}  // namespace ex01
