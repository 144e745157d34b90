// Attempt (wrong): "RoPE's base is 10000", so the scores call rotate() with
// 10000 whatever base they are given; long-context models (Llama 3: 500,000)
// change it, and the score must use the base it is given.
#include "exercises/ex07_wrong_rope.h"

#include <cmath>

#include "exercises/not_implemented.h"

namespace ex07 {
namespace {

constexpr double kRopeBase = 10000.0;

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
        const double theta = std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(d));
        const double c = std::cos(static_cast<double>(m) * theta), s = std::sin(static_cast<double>(m) * theta);
        out[2 * i] = x[2 * i] * c - x[2 * i + 1] * s;
        out[2 * i + 1] = x[2 * i] * s + x[2 * i + 1] * c;
    }
    return out;
}

double rope_score(const Vec& q, int64_t t, const Vec& k, int64_t j, double) {
    return dot(rotate(q, t, kRopeBase), rotate(k, j, kRopeBase));
}

double wrong_score(const Vec& q, int64_t t, const Vec& k, int64_t j, double) {
    return dot(rotate(q, t - j, kRopeBase), rotate(k, t - j, kRopeBase));
}

}  // namespace ex07
