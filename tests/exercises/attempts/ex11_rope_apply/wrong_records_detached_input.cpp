// Attempt (wrong): records the op on the detached copy it computed from
// ({xd}) rather than on x itself, so the graph never reaches x and no
// gradient flows back to it.
#include "exercises/ex11_rope_apply.h"

#include <cmath>

#include "exercises/not_implemented.h"

namespace ex11 {

namespace {

// Turns every pair of row t of `in` by sign · positions[t] · θ_i.
ag::Tensor rotate(const ag::Tensor& in, const std::vector<int64_t>& positions, double base, ag::RopePairing pairing,
                  double sign) {
    ag::Tensor src = in.detach().contiguous();
    const int64_t T = src.size(0), d = src.size(1), half = d / 2;
    ag::Tensor out = ag::Tensor::zeros({T, d});
    const double* a = src.data();
    double* o = out.data();
    for (int64_t t = 0; t < T; ++t) {
        const double m = static_cast<double>(positions[static_cast<size_t>(t)]);
        for (int64_t i = 0; i < half; ++i) {
            const double theta = std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(d));
            const int64_t j0 = pairing == ag::RopePairing::Half ? i : 2 * i;
            const int64_t j1 = pairing == ag::RopePairing::Half ? i + half : 2 * i + 1;
            const double c = std::cos(sign * m * theta), s = std::sin(sign * m * theta);
            o[t * d + j0] = a[t * d + j0] * c - a[t * d + j1] * s;
            o[t * d + j1] = a[t * d + j0] * s + a[t * d + j1] * c;
        }
    }
    return out;
}

}  // namespace

ag::Tensor rope_apply(const ag::Tensor& x, const std::vector<int64_t>& positions, double base,
                      ag::RopePairing pairing) {
    ag::Tensor xd = x.detach().contiguous();
    ag::Tensor y = rotate(xd, positions, base, pairing, 1.0);
    return ag::record("rope_apply", y, {xd}, [positions, base, pairing](const ag::Tensor& dy) {
        return std::vector<ag::Tensor>{rotate(dy, positions, base, pairing, -1.0)};
    });
}

ag::Tensor rope_apply(const ag::Tensor& x, double base, ag::RopePairing pairing) {
    std::vector<int64_t> positions;
    for (int64_t t = 0; t < x.size(0); ++t) positions.push_back(t);
    return rope_apply(x, positions, base, pairing);
}

}  // namespace ex11
