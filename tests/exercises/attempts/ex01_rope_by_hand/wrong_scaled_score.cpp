// Attempt (wrong): copies the attention score of §4.2 with its 1/√d_k, dividing the dot product by √2 for
// d = 2, although the exercise asks for the plain dot product q̃_t · k̃_j.
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
    return (qt[0] * kj[0] + qt[1] * kj[1]) / std::sqrt(2.0);
}

}  // namespace ex01
