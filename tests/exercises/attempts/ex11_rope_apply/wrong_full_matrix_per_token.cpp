// Attempt (wrong): builds the whole block-diagonal R_{Θ,m} of every token,
// d×d mostly zeros, and multiplies with matmul: O(d²) work and memory per
// token where §4.6 (and the statement) ask for O(d), pair by pair.
#include "exercises/ex11_rope_apply.h"

#include <cmath>

#include "exercises/not_implemented.h"

namespace ex11 {

namespace {

// [T, d, d]: R_{Θ, sign·m_t} for every token t, entry by entry.
ag::Tensor rotation_matrices(int64_t d, const std::vector<int64_t>& positions, double base, ag::RopePairing pairing,
                             double sign) {
    const auto T = static_cast<int64_t>(positions.size());
    ag::Tensor R = ag::Tensor::zeros({T, d, d});
    double* r = R.data();
    for (int64_t t = 0; t < T; ++t) {
        for (int64_t i = 0; i < d / 2; ++i) {
            const double angle = sign * static_cast<double>(positions[static_cast<size_t>(t)]) *
                                 std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(d));
            const int64_t p = pairing == ag::RopePairing::Half ? i : 2 * i;
            const int64_t q = pairing == ag::RopePairing::Half ? i + d / 2 : 2 * i + 1;
            double* Rt = r + t * d * d;
            Rt[p * d + p] = std::cos(angle);
            Rt[p * d + q] = -std::sin(angle);
            Rt[q * d + p] = std::sin(angle);
            Rt[q * d + q] = std::cos(angle);
        }
    }
    return R;
}

ag::Tensor apply(const ag::Tensor& v, const std::vector<int64_t>& positions, double base, ag::RopePairing pairing,
                 double sign) {
    ag::NoGradGuard no_grad;
    const int64_t T = v.size(0), d = v.size(1);
    ag::Tensor R = rotation_matrices(d, positions, base, pairing, sign);
    ag::Tensor col = v.detach().contiguous().reshape({T, d, 1});
    return ag::matmul(R, col).reshape({T, d}).contiguous();
}

}  // namespace

ag::Tensor rope_apply(const ag::Tensor& x, const std::vector<int64_t>& positions, double base,
                      ag::RopePairing pairing) {
    ag::Tensor y = apply(x, positions, base, pairing, 1.0);
    return ag::record("rope_apply", y, {x}, [positions, base, pairing](const ag::Tensor& dy) {
        return std::vector<ag::Tensor>{apply(dy, positions, base, pairing, -1.0)};
    });
}

ag::Tensor rope_apply(const ag::Tensor& x, double base, ag::RopePairing pairing) {
    std::vector<int64_t> positions(static_cast<size_t>(x.size(0)));
    for (size_t t = 0; t < positions.size(); ++t) positions[t] = static_cast<int64_t>(t);
    return rope_apply(x, positions, base, pairing);
}

}  // namespace ex11
