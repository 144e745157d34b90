// Attempt (wrong): writes the 2×2 block as [[cos, sin], [-sin, cos]], which
// turns clockwise (by -mθ_i); the slides' R_{Θ,m} turns [1, 0] towards [0, 1].
#include "exercises/ex07_wrong_rope.h"

#include <cmath>

#include "exercises/not_implemented.h"

namespace ex07 {
namespace {

double inner(const Vec& a, const Vec& b) {
    double s = 0;
    for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
    return s;
}

}  // namespace

Vec rotate(const Vec& x, int64_t m, double base) {
    const size_t d = x.size();
    Vec r(d);
    for (size_t p = 0; p < d / 2; ++p) {
        const double a = static_cast<double>(m) / std::pow(base, 2.0 * static_cast<double>(p) / static_cast<double>(d));
        r[2 * p] = std::cos(a) * x[2 * p] + std::sin(a) * x[2 * p + 1];
        r[2 * p + 1] = -std::sin(a) * x[2 * p] + std::cos(a) * x[2 * p + 1];
    }
    return r;
}

double rope_score(const Vec& q, int64_t t, const Vec& k, int64_t j, double base) {
    return inner(rotate(q, t, base), rotate(k, j, base));
}

double wrong_score(const Vec& q, int64_t t, const Vec& k, int64_t j, double base) {
    return inner(rotate(q, t - j, base), rotate(k, t - j, base));
}

}  // namespace ex07
