// Attempt (wrong): takes "position only changes the direction of q and k" (§4.5) to mean the score is the
// cosine of the angle between them, dividing the dot product by |q||k|.
#include "exercises/ex01_rope_by_hand.h"

#include <cmath>

#include "exercises/not_implemented.h"

namespace ex01 {
Vec2 rotate(const Vec2& x, int64_t m, double theta) {
    const double a = static_cast<double>(m) * theta;
    return {std::cos(a) * x[0] - std::sin(a) * x[1], std::sin(a) * x[0] + std::cos(a) * x[1]};
}

double rope_score(const Vec2& q, int64_t t, const Vec2& k, int64_t j, double theta) {
    const Vec2 qt = rotate(q, t, theta), kj = rotate(k, j, theta);
    const double norms = std::hypot(q[0], q[1]) * std::hypot(k[0], k[1]);
    return norms > 0.0 ? (qt[0] * kj[0] + qt[1] * kj[1]) / norms : 0.0;
}

}  // namespace ex01
