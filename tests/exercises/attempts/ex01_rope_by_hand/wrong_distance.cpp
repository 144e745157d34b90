// Attempt (wrong): uses R_jᵀR_t = R_{t-j} but with the distance |t - j|, believing the score depends on how
// far apart the tokens are; right for every key before the query, wrong for a key after it (j > t).
#include "exercises/ex01_rope_by_hand.h"

#include <cmath>
#include <cstdlib>

#include "exercises/not_implemented.h"

namespace ex01 {

Vec2 rotate(const Vec2& x, int64_t m, double theta) {
    const double c = std::cos(static_cast<double>(m) * theta), s = std::sin(static_cast<double>(m) * theta);
    return {c * x[0] - s * x[1], s * x[0] + c * x[1]};
}

double rope_score(const Vec2& q, int64_t t, const Vec2& k, int64_t j, double theta) {
    // (R_t q)·(R_j k) = (R_{t-j} q)·k: turn the query by the distance only
    const Vec2 turned = rotate(q, std::llabs(t - j), theta);
    return turned[0] * k[0] + turned[1] * k[1];
}

}  // namespace ex01
