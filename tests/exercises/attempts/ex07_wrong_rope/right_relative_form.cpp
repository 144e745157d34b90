// Attempt (right): rotate() builds each angle from the previous pair's
// frequency (θ_{i+1} = θ_i · base^(-2/d)); rope_score uses the identity (R_t
// q)·(R_j k) = (R_{t-j} q)·k with one rotation (negative for t < j), and
// wrong_score returns q·k straight away, since R^T R = I.
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
    const double step = std::pow(base, -2.0 / static_cast<double>(d));
    double theta = 1.0;
    for (size_t i = 0; i < d / 2; ++i, theta *= step) {
        const double c = std::cos(static_cast<double>(m) * theta), s = std::sin(static_cast<double>(m) * theta);
        out[2 * i] = x[2 * i] * c - x[2 * i + 1] * s;
        out[2 * i + 1] = x[2 * i] * s + x[2 * i + 1] * c;
    }
    return out;
}

double rope_score(const Vec& q, int64_t t, const Vec& k, int64_t j, double base) {
    return dot(rotate(q, t - j, base), k);
}

double wrong_score(const Vec& q, int64_t, const Vec& k, int64_t, double) { return dot(q, k); }

}  // namespace ex07
