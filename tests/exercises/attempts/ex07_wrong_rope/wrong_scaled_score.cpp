// Attempt (wrong): divides both scores by sqrt(d) as attention does (s = k·q /
// sqrt(d_k)); the functions return the plain dot products (R_t q)·(R_j k) and
// (R_{t-j} q)·(R_{t-j} k).
#include "exercises/ex07_wrong_rope.h"

#include <cmath>

namespace ex07 {
namespace {

double dot(const Vec& a, const Vec& b) {
    double s = 0;
    for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
    return s / std::sqrt(static_cast<double>(a.size()));
}

}  // namespace

Vec rotate(const Vec& x, int64_t m, double base) {
    const size_t d = x.size();
    Vec out(d);
    for (size_t i = 0; i < d / 2; ++i) {
        const double theta = std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(d));
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
