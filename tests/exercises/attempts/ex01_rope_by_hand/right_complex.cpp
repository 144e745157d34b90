// Attempt (right): treats [x0, x1] as the complex number x0 + i·x1, so R_m x is a product with e^{imθ}, and
// computes the score from the relative turn alone: (R_t q)·(R_j k) = (R_{t-j} q)·k = Re(q e^{i(t-j)θ} conj(k)).
#include "exercises/ex01_rope_by_hand.h"

#include <cmath>
#include <complex>

#include "exercises/not_implemented.h"

namespace ex01 {

namespace {
std::complex<double> as_complex(const Vec2& x) { return {x[0], x[1]}; }
std::complex<double> turn(int64_t m, double theta) { return std::polar(1.0, static_cast<double>(m) * theta); }
}  // namespace

Vec2 rotate(const Vec2& x, int64_t m, double theta) {
    const std::complex<double> z = as_complex(x) * turn(m, theta);
    return {z.real(), z.imag()};
}

double rope_score(const Vec2& q, int64_t t, const Vec2& k, int64_t j, double theta) {
    return (as_complex(q) * turn(t - j, theta) * std::conj(as_complex(k))).real();
}

}  // namespace ex01
