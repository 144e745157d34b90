// Attempt (wrong): loops over the dimensions two at a time and puts the
// dimension index 2i into the frequency, θ = base^(-2·(2i)/d), where the
// slides' θ_i = base^(-2i/d) counts pairs.
#include "exercises/ex07_wrong_rope.h"

#include <cmath>

#include "exercises/not_implemented.h"

namespace ex07 {

Vec rotate(const Vec& x, int64_t m, double base) {
    const double d = static_cast<double>(x.size());
    Vec out = x;
    for (size_t dim = 0; dim + 1 < x.size(); dim += 2) {
        const double th = std::pow(base, -2.0 * static_cast<double>(dim) / d);
        const double c = std::cos(static_cast<double>(m) * th), s = std::sin(static_cast<double>(m) * th);
        out[dim] = c * x[dim] - s * x[dim + 1];
        out[dim + 1] = s * x[dim] + c * x[dim + 1];
    }
    return out;
}

double rope_score(const Vec& q, int64_t t, const Vec& k, int64_t j, double base) {
    const Vec qt = rotate(q, t, base), kj = rotate(k, j, base);
    double s = 0;
    for (size_t i = 0; i < qt.size(); ++i) s += qt[i] * kj[i];
    return s;
}

double wrong_score(const Vec& q, int64_t t, const Vec& k, int64_t j, double base) {
    const Vec qr = rotate(q, t - j, base), kr = rotate(k, t - j, base);
    double s = 0;
    for (size_t i = 0; i < qr.size(); ++i) s += qr[i] * kr[i];
    return s;
}

}  // namespace ex07
