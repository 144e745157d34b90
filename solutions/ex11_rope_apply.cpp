// Exercise 11 · RoPE on a whole sequence, as an autograd op: reference
// solution (lecture §4.6).
#include "exercises/ex11_rope_apply.h"

#include <cmath>
#include <stdexcept>
#include <string>

namespace ex11 {
namespace {

// out[t] = R_{Θ,m} x[t] with every angle m·θ_i multiplied by `direction`:
// +1 is the rotation itself, -1 its inverse Rᵀ. Pair i = (a, b) turns as
//   a' = a cos φ - b sin φ,   b' = a sin φ + b cos φ,   φ = direction · m · θ_i.
// O(d) per row: the block-diagonal R is never built (§4.6).
ag::Tensor rotate(const ag::Tensor& x, const std::vector<int64_t>& positions, double base, ag::RopePairing pairing,
                  double direction) {
    const int64_t T = x.size(0), d = x.size(1), half = d / 2;
    const ag::Tensor xc = x.contiguous();
    ag::Tensor out = ag::Tensor::zeros({T, d});
    const double* px = xc.data();
    double* po = out.data();
    for (int64_t t = 0; t < T; ++t) {
        const double m = static_cast<double>(positions[static_cast<size_t>(t)]);
        const double* xt = px + t * d;
        double* yt = po + t * d;
        for (int64_t i = 0; i < half; ++i) {
            const double theta = std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(d));
            const double c = std::cos(direction * m * theta), s = std::sin(direction * m * theta);
            // Half: (i, i + d/2), the §4.6 matrix form; Interleaved: (2i, 2i+1).
            const int64_t ia = pairing == ag::RopePairing::Half ? i : 2 * i;
            const int64_t ib = pairing == ag::RopePairing::Half ? i + half : 2 * i + 1;
            const double a = xt[ia], b = xt[ib];
            yt[ia] = a * c - b * s;
            yt[ib] = a * s + b * c;
        }
    }
    return out;
}

}  // namespace

// y = R_{Θ,m} x row by row. Backward: dx = R_{Θ,m}ᵀ dy, the rotation by
// -m·θ_i (a rotation's inverse is its transpose), so no input needs saving.
ag::Tensor rope_apply(const ag::Tensor& x, const std::vector<int64_t>& positions, double base,
                      ag::RopePairing pairing) {
    if (x.dim() != 2 || x.size(1) % 2 != 0 || static_cast<int64_t>(positions.size()) != x.size(0))
        throw std::invalid_argument("rope_apply: x must be [T, d] with d even and T positions, got x " +
                                    ag::shape_str(x.shape()) + " and " + std::to_string(positions.size()) +
                                    " positions");
    const ag::Tensor y = rotate(x.detach(), positions, base, pairing, 1.0);
    return ag::record("rope_apply", y, {x}, [positions, base, pairing](const ag::Tensor& dy) {
        return std::vector<ag::Tensor>{rotate(dy, positions, base, pairing, -1.0)};
    });
}

ag::Tensor rope_apply(const ag::Tensor& x, double base, ag::RopePairing pairing) {
    std::vector<int64_t> positions(static_cast<size_t>(x.dim() > 0 ? x.size(0) : 0));
    for (size_t t = 0; t < positions.size(); ++t) positions[t] = static_cast<int64_t>(t);
    return rope_apply(x, positions, base, pairing);
}

}  // namespace ex11
