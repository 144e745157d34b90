// Attempt (wrong): the version on the slide marked "wrong" (§4.3): q and k are both turned by the relative
// position m = t - j, which cancels in the dot product, so the score carries no position at all.
#include "exercises/ex01_rope_by_hand.h"

#include <cmath>

#include "exercises/not_implemented.h"

namespace ex01 {

Vec2 rotate(const Vec2& x, int64_t m, double theta) {
    const double angle = theta * static_cast<double>(m);
    return {x[0] * std::cos(angle) - x[1] * std::sin(angle), x[0] * std::sin(angle) + x[1] * std::cos(angle)};
}

double rope_score(const Vec2& q, int64_t t, const Vec2& k, int64_t j, double theta) {
    const int64_t m = t - j;  // only the relative position should matter
    const Vec2 a = rotate(q, m, theta), b = rotate(k, m, theta);
    return a[0] * b[0] + a[1] * b[1];
}

}  // namespace ex01
