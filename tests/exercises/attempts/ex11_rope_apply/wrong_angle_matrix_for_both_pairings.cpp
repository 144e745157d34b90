// Attempt (wrong): builds §4.6's angle matrix C (row m: mθ_1 … mθ_{d/2}, mθ_1 …
// mθ_{d/2}) and gives dim j the angle C[m][j] in both pairings; for
// Interleaved the two dims of a pair then turn by different angles.
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
    // column j of §4.6's C, divided by m
    auto C = [&](int64_t j) { return std::pow(base, -2.0 * static_cast<double>(j % half) / static_cast<double>(d)); };
    double* o = out.data();
    for (int64_t t = 0; t < T; ++t) {
        const double m = static_cast<double>(positions[static_cast<size_t>(t)]);
        for (int64_t i = 0; i < half; ++i) {
            const double theta = std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(d));
            const int64_t j0 = pairing == ag::RopePairing::Half ? i : 2 * i;
            const int64_t j1 = pairing == ag::RopePairing::Half ? i + half : 2 * i + 1;
            (void)theta;
            const double c0 = std::cos(sign * m * C(j0)), s0 = std::sin(sign * m * C(j0));
            const double c1 = std::cos(sign * m * C(j1)), s1 = std::sin(sign * m * C(j1));
            o[t * d + j0] = a[t * d + j0] * c0 - a[t * d + j1] * s0;
            o[t * d + j1] = a[t * d + j0] * s1 + a[t * d + j1] * c1;
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
