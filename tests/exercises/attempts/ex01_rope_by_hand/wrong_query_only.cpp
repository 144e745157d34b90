// Attempt (wrong): puts the position into the query only ("the key is content, the query asks from where"),
// so the score is (R_t q)·k and the key's own position j is never used.
#include "exercises/ex01_rope_by_hand.h"

#include <cmath>

#include "exercises/not_implemented.h"

namespace ex01 {

Vec2 rotate(const Vec2& x, int64_t m, double theta) {
    const double c = std::cos(static_cast<double>(m) * theta);
    const double s = std::sin(static_cast<double>(m) * theta);
    Vec2 out;
    out[0] = c * x[0] - s * x[1];
    out[1] = s * x[0] + c * x[1];
    return out;
}

double rope_score(const Vec2& q, int64_t t, const Vec2& k, int64_t j, double theta) {
    (void)j;  // keys stay as they are
    const Vec2 rq = rotate(q, t, theta);
    return rq[0] * k[0] + rq[1] * k[1];
}

}  // namespace ex01
