// Attempt (wrong): computes the relative offset t - j as an unsigned count of positions (a distance is never
// negative), so a key after the query (j > t) wraps around to a huge offset.
#include "exercises/ex01_rope_by_hand.h"

#include <cmath>

#include "exercises/not_implemented.h"

namespace ex01 {
Vec2 rotate(const Vec2& x, int64_t m, double theta) {
    const double a = static_cast<double>(m) * theta;
    return {std::cos(a) * x[0] - std::sin(a) * x[1], std::sin(a) * x[0] + std::cos(a) * x[1]};
}

double rope_score(const Vec2& q, int64_t t, const Vec2& k, int64_t j, double theta) {
    const auto offset = static_cast<uint64_t>(t) - static_cast<uint64_t>(j);
    const double a = static_cast<double>(offset) * theta;
    const Vec2 turned = {std::cos(a) * q[0] - std::sin(a) * q[1], std::sin(a) * q[0] + std::cos(a) * q[1]};
    return turned[0] * k[0] + turned[1] * k[1];
}

}  // namespace ex01
