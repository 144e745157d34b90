// Attempt (wrong): pairs dimension i with dimension i + d/2 (the "rotate half"
// layout of many codebases), believing the two layouts give the same vector;
// they give the same scores only if the weights were trained that way.
#include "exercises/ex07_wrong_rope.h"

#include <cmath>

#include "exercises/not_implemented.h"

namespace ex07 {

Vec rotate(const Vec& x, int64_t m, double base) {
    const size_t half = x.size() / 2;
    Vec y(x.size());
    for (size_t i = 0; i < half; ++i) {
        const double angle =
            static_cast<double>(m) * std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(x.size()));
        y[i] = std::cos(angle) * x[i] - std::sin(angle) * x[i + half];
        y[i + half] = std::sin(angle) * x[i] + std::cos(angle) * x[i + half];
    }
    return y;
}

double rope_score(const Vec& q, int64_t t, const Vec& k, int64_t j, double base) {
    const Vec a = rotate(q, t, base), b = rotate(k, j, base);
    double s = 0;
    for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
    return s;
}

double wrong_score(const Vec& q, int64_t t, const Vec& k, int64_t j, double base) {
    return rope_score(q, t - j, k, t - j, base);
}

}  // namespace ex07
