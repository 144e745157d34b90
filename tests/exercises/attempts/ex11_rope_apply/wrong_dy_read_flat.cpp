// Attempt (wrong): the forward makes x contiguous, but the backward reads the
// incoming gradient with dy.data() as it comes, assuming it is a fresh
// contiguous tensor (inside attention it arrives through a transpose).
#include "exercises/ex11_rope_apply.h"

#include <cmath>

#include "exercises/not_implemented.h"

namespace ex11 {

namespace {

// Turns every pair of the contiguous rows in `in` by sign·m·θ_i into `out`.
void turn_rows(const double* in, double* out, int64_t T, int64_t d, const std::vector<int64_t>& positions, double base,
               ag::RopePairing pairing, double sign) {
    for (int64_t t = 0; t < T; ++t) {
        const double m = static_cast<double>(positions[static_cast<size_t>(t)]);
        for (int64_t i = 0; i < d / 2; ++i) {
            const double angle = sign * m * std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(d));
            const int64_t a = pairing == ag::RopePairing::Half ? i : 2 * i;
            const int64_t b = pairing == ag::RopePairing::Half ? i + d / 2 : 2 * i + 1;
            const double xa = in[t * d + a], xb = in[t * d + b];
            out[t * d + a] = xa * std::cos(angle) - xb * std::sin(angle);
            out[t * d + b] = xa * std::sin(angle) + xb * std::cos(angle);
        }
    }
}

}  // namespace

ag::Tensor rope_apply(const ag::Tensor& x, const std::vector<int64_t>& positions, double base,
                      ag::RopePairing pairing) {
    const int64_t T = x.size(0), d = x.size(1);
    const ag::Tensor xc = x.detach().contiguous();
    ag::Tensor y = ag::Tensor::zeros({T, d});
    turn_rows(xc.data(), y.data(), T, d, positions, base, pairing, 1.0);
    return ag::record("rope_apply", y, {x}, [positions, base, pairing, T, d](const ag::Tensor& dy) {
        ag::Tensor dx = ag::Tensor::zeros({T, d});
        turn_rows(dy.data(), dx.data(), T, d, positions, base, pairing, -1.0);
        return std::vector<ag::Tensor>{dx};
    });
}

ag::Tensor rope_apply(const ag::Tensor& x, double base, ag::RopePairing pairing) {
    std::vector<int64_t> positions;
    for (int64_t t = 0; t < x.size(0); ++t) positions.push_back(t);
    return rope_apply(x, positions, base, pairing);
}

}  // namespace ex11
