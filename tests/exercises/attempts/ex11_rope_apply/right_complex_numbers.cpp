// Attempt (right): each pair (a, b) is the complex number a + ib and turning
// it by the angle φ is multiplying by e^{iφ} (std::polar); the loops run over
// pairs outside and tokens inside, and the backward multiplies by e^{-iφ}.
#include <cmath>
#include <complex>
#include <numeric>

#include "exercises/ex11_rope_apply.h"
#include "exercises/not_implemented.h"

namespace ex11 {

namespace {

// The two dims that form pair i of a head of width d.
std::pair<int64_t, int64_t> pair_dims(int64_t i, int64_t d, ag::RopePairing pairing) {
    if (pairing == ag::RopePairing::Half) return {i, i + d / 2};
    return {2 * i, 2 * i + 1};
}

// out[t] = e^{i·sign·m_t·θ_k} applied to every pair k of in[t].
ag::Tensor turn(const ag::Tensor& in, const std::vector<int64_t>& positions, double base, ag::RopePairing pairing,
                double sign) {
    const ag::Tensor src = in.contiguous();
    const int64_t rows = src.size(0);
    const int64_t d = src.size(1);
    ag::Tensor out = ag::empty({rows, d});
    const double* s = src.data();
    double* o = out.data();
    for (int64_t k = 0; k < d / 2; ++k) {
        const double theta = std::pow(base, -2.0 * static_cast<double>(k) / static_cast<double>(d));
        const auto [ia, ib] = pair_dims(k, d, pairing);
        for (int64_t t = 0; t < rows; ++t) {
            const double phi = sign * static_cast<double>(positions[static_cast<size_t>(t)]) * theta;
            const std::complex<double> z(s[t * d + ia], s[t * d + ib]);
            const std::complex<double> w = z * std::polar(1.0, phi);
            o[t * d + ia] = w.real();
            o[t * d + ib] = w.imag();
        }
    }
    return out;
}

}  // namespace

ag::Tensor rope_apply(const ag::Tensor& x, const std::vector<int64_t>& positions, double base,
                      ag::RopePairing pairing) {
    ag::Tensor y = turn(x.detach(), positions, base, pairing, +1.0);
    return ag::record("rope_apply", y, {x}, [positions, base, pairing](const ag::Tensor& dy) {
        return std::vector<ag::Tensor>{turn(dy.detach(), positions, base, pairing, -1.0)};
    });
}

ag::Tensor rope_apply(const ag::Tensor& x, double base, ag::RopePairing pairing) {
    std::vector<int64_t> positions(static_cast<size_t>(x.size(0)));
    std::iota(positions.begin(), positions.end(), int64_t{0});
    return rope_apply(x, positions, base, pairing);
}

}  // namespace ex11
