// Attempt (wrong): "RoPE encodes the relative position", so rope_score leaves
// q alone and turns only the key by the distance t - j. But (R_t q)·(R_j k) =
// qᵀR_{j-t} k: turning k by t - j gets the direction of the turn backwards.
#include "exercises/ex07_wrong_rope.h"

#include <cmath>

#include "exercises/not_implemented.h"

namespace ex07 {
namespace {

double dot(const Vec& a, const Vec& b) {
    double s = 0;
    for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
    return s;
}

}  // namespace

Vec rotate(const Vec& x, int64_t m, double base) {
    Vec out(x.size());
    const double d = static_cast<double>(x.size());
    for (size_t i = 0; 2 * i < x.size(); ++i) {
        const double angle = static_cast<double>(m) * std::pow(base, -2.0 * static_cast<double>(i) / d);
        out[2 * i] = x[2 * i] * std::cos(angle) - x[2 * i + 1] * std::sin(angle);
        out[2 * i + 1] = x[2 * i] * std::sin(angle) + x[2 * i + 1] * std::cos(angle);
    }
    return out;
}

double rope_score(const Vec& q, int64_t t, const Vec& k, int64_t j, double base) {
    return dot(q, rotate(k, t - j, base));
}

double wrong_score(const Vec& q, int64_t t, const Vec& k, int64_t j, double base) {
    return dot(rotate(q, t - j, base), rotate(k, t - j, base));
}

}  // namespace ex07
