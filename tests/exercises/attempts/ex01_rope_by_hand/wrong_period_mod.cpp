// Attempt (wrong): keeps positions small by reducing m modulo the period 2π/θ rounded to whole positions
// (6 for θ = 1), believing the rotation repeats after that many positions; it does not, the period is not an
// integer number of positions.
#include "exercises/ex01_rope_by_hand.h"

#include <cmath>

#include "exercises/not_implemented.h"

namespace ex01 {

Vec2 rotate(const Vec2& x, int64_t m, double theta) {
    const auto period = static_cast<int64_t>(2.0 * 3.14159265358979323846 / theta);
    const int64_t r = period > 0 ? m % period : m;
    const double a = static_cast<double>(r) * theta;
    return {std::cos(a) * x[0] - std::sin(a) * x[1], std::sin(a) * x[0] + std::cos(a) * x[1]};
}

double rope_score(const Vec2& q, int64_t t, const Vec2& k, int64_t j, double theta) {
    const Vec2 qt = rotate(q, t, theta), kj = rotate(k, j, theta);
    return qt[0] * kj[0] + qt[1] * kj[1];
}

}  // namespace ex01
