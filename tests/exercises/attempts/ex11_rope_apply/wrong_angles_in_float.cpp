// Attempt (wrong): keeps the angles m·θ_i in float, as a GPU kernel would in
// half precision; at positions in the thousands the angle is off by 1e-4
// rad and more, far from the double precision the engine works in.
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
            const float angle = static_cast<float>(sign * m) * static_cast<float>(theta);
            const double c = std::cos(angle), s = std::sin(angle);
            o[t * d + j0] = a[t * d + j0] * c - a[t * d + j1] * s;
            o[t * d + j1] = a[t * d + j0] * s + a[t * d + j1] * c;
        }
    }
    return out;
}

}  // namespace

ag::Tensor rope_apply(const ag::Tensor& x, const std::vector<int64_t>& positions, double base,
                      ag::RopePairing pairing) {
    ag::Tensor y = rotate(x, positions, base, pairing, 1.0);
    return ag::record("rope_apply", y, {x}, [positions, base, pairing](const ag::Tensor& dy) {
        return std::vector<ag::Tensor>{rotate(dy, positions, base, pairing, -1.0)};
    });
}

ag::Tensor rope_apply(const ag::Tensor& x, double base, ag::RopePairing pairing) {
    std::vector<int64_t> positions;
    for (int64_t t = 0; t < x.size(0); ++t) positions.push_back(t);
    return rope_apply(x, positions, base, pairing);
}

}  // namespace ex11
