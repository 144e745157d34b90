// Attempt (wrong): thinks RoPE just scales the plain score q·k by cos((t - j)θ), the cosine of the relative
// angle; right for q = k = [1, 0], but a rotation also mixes the two components (the sin terms).
#include "exercises/ex01_rope_by_hand.h"

#include <cmath>

#include "exercises/not_implemented.h"

namespace ex01 {

Vec2 rotate(const Vec2& x, int64_t m, double theta) {
    const double a = static_cast<double>(m) * theta;
    return {std::cos(a) * x[0] - std::sin(a) * x[1], std::sin(a) * x[0] + std::cos(a) * x[1]};
}

double rope_score(const Vec2& q, int64_t t, const Vec2& k, int64_t j, double theta) {
    // the rotations only leave the angle between them: cos of the relative position
    const double plain = q[0] * k[0] + q[1] * k[1];
    return std::cos(static_cast<double>(t - j) * theta) * plain;
}

}  // namespace ex01
