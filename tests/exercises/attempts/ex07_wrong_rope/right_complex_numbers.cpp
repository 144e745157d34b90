// Attempt (right): each pair (x_2i, x_2i+1) as the complex number
// x_2i + i·x_2i+1, turned by multiplying with e^{i·mθ_i}; the score uses
// (R_t q)·(R_j k) = qᵀR_{j-t} k, i.e. only k turned, by j - t.
#include "exercises/ex07_wrong_rope.h"

#include <cmath>
#include <complex>

#include "exercises/not_implemented.h"

namespace ex07 {

Vec rotate(const Vec& x, int64_t m, double base) {
    Vec out(x.size());
    const double d = static_cast<double>(x.size());
    for (size_t i = 0; 2 * i + 1 < x.size(); ++i) {
        const double theta = std::exp(-2.0 * static_cast<double>(i) / d * std::log(base));
        const std::complex<double> z(x[2 * i], x[2 * i + 1]);
        const std::complex<double> turned = z * std::polar(1.0, static_cast<double>(m) * theta);
        out[2 * i] = turned.real();
        out[2 * i + 1] = turned.imag();
    }
    return out;
}

double rope_score(const Vec& q, int64_t t, const Vec& k, int64_t j, double base) {
    const Vec kr = rotate(k, j - t, base);
    double s = 0;
    for (size_t i = 0; i < q.size(); ++i) s += q[i] * kr[i];
    return s;
}

double wrong_score(const Vec& q, int64_t t, const Vec& k, int64_t j, double base) {
    const Vec qr = rotate(q, t - j, base), kr = rotate(k, t - j, base);
    double s = 0;
    for (size_t i = 0; i < qr.size(); ++i) s += qr[i] * kr[i];
    return s;
}

}  // namespace ex07
