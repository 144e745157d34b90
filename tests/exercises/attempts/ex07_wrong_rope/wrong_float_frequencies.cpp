// Attempt (wrong): keeps the frequencies θ_i in a float table ("7 digits are
// plenty for a frequency"); the angle m·θ_i multiplies θ's rounding error by m,
// so at m = 100,000 far positions are turned by visibly wrong angles.
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
    Vec out(d);
    for (size_t i = 0; i < d / 2; ++i) {
        const float theta_f =
            static_cast<float>(std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(d)));
        const double theta = static_cast<double>(theta_f);
        const double c = std::cos(static_cast<double>(m) * theta), s = std::sin(static_cast<double>(m) * theta);
        out[2 * i] = x[2 * i] * c - x[2 * i + 1] * s;
        out[2 * i + 1] = x[2 * i] * s + x[2 * i + 1] * c;
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
