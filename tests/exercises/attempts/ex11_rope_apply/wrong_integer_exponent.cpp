// Attempt (wrong): computes the exponent -2i/d of θ_i = base^(-2i/d) with
// integers and casts afterwards; -2i/d is then 0 for every pair, so every
// pair turns at the same speed θ = 1 (§4.5: the clock hands all coincide).
#include "exercises/ex11_rope_apply.h"

#include <cmath>

#include "exercises/not_implemented.h"

namespace ex11 {

namespace {

// Rows of `src` turned by sign · positions[t] · θ_i, pair by pair.
ag::Tensor rotated(const ag::Tensor& src, const std::vector<int64_t>& positions, double base, ag::RopePairing pairing,
                   double sign) {
    const ag::Tensor in = src.detach().contiguous();
    const int64_t T = in.size(0), d = in.size(1), half = d / 2;
    ag::Tensor out = ag::Tensor::zeros({T, d});
    for (int64_t t = 0; t < T; ++t)
        for (int64_t i = 0; i < half; ++i) {
            const double theta = std::pow(base, static_cast<double>(-2 * i / d));
            const double phi = sign * static_cast<double>(positions[static_cast<size_t>(t)]) * theta;
            const int64_t a = pairing == ag::RopePairing::Half ? i : 2 * i;
            const int64_t b = pairing == ag::RopePairing::Half ? i + half : 2 * i + 1;
            const double xa = in.data()[t * d + a], xb = in.data()[t * d + b];
            out.data()[t * d + a] = std::cos(phi) * xa - std::sin(phi) * xb;
            out.data()[t * d + b] = std::sin(phi) * xa + std::cos(phi) * xb;
        }
    return out;
}

}  // namespace

ag::Tensor rope_apply(const ag::Tensor& x, const std::vector<int64_t>& positions, double base,
                      ag::RopePairing pairing) {
    return ag::record("rope_apply", rotated(x, positions, base, pairing, 1.0), {x},
                      [positions, base, pairing](const ag::Tensor& dy) {
                          return std::vector<ag::Tensor>{rotated(dy, positions, base, pairing, -1.0)};
                      });
}

ag::Tensor rope_apply(const ag::Tensor& x, double base, ag::RopePairing pairing) {
    std::vector<int64_t> positions;
    for (int64_t t = 0; t < x.size(0); ++t) positions.push_back(t);
    return rope_apply(x, positions, base, pairing);
}

}  // namespace ex11
