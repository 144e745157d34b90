// Attempt (wrong): turns each pair in place, so the second coordinate is
// computed from the first one already turned (x_2i' sin + x_2i+1 cos instead of
// x_2i sin + x_2i+1 cos); both coordinates must come from the old pair.
#include "exercises/ex07_wrong_rope.h"

#include <cmath>

namespace ex07 {
namespace {

double dot(const Vec& a, const Vec& b) {
    double s = 0;
    for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
    return s;
}

}  // namespace

Vec rotate(const Vec& x, int64_t m, double base) {
    const size_t d = x.size();
    Vec out = x;
    for (size_t i = 0; i < d / 2; ++i) {
        const double theta = std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(d));
        const double c = std::cos(static_cast<double>(m) * theta), s = std::sin(static_cast<double>(m) * theta);
        out[2 * i] = out[2 * i] * c - out[2 * i + 1] * s;
        out[2 * i + 1] = out[2 * i] * s + out[2 * i + 1] * c;
    }
    return out;
}

double rope_score(const Vec& q, int64_t t, const Vec& k, int64_t j, double base) {
    return dot(rotate(q, t, base), rotate(k, j, base));
}

double wrong_score(const Vec& q, int64_t t, const Vec& k, int64_t j, double base) {
    return dot(rotate(q, t - j, base), rotate(k, t - j, base));
}

}  // namespace ex07
