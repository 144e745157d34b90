// Attempt (wrong): follows the slides' element-wise form, pairing dims 2i and
// 2i+1, whatever `pairing` says; for RopePairing::Half (Llama, the §4.6
// matrix form) dim i pairs with i + d/2.
#include "exercises/ex11_rope_apply.h"

#include <cmath>

#include "exercises/not_implemented.h"

namespace ex11 {

namespace {

std::vector<double> spin(const std::vector<double>& v, int64_t T, int64_t d, const std::vector<int64_t>& pos,
                         double base, double dir) {
    std::vector<double> out(v.size());
    for (int64_t t = 0; t < T; ++t)
        for (int64_t i = 0; i < d / 2; ++i) {
            const double th = dir * static_cast<double>(pos[static_cast<size_t>(t)]) *
                              std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(d));
            const size_t e = static_cast<size_t>(t * d + 2 * i), o = e + 1;
            out[e] = v[e] * std::cos(th) - v[o] * std::sin(th);
            out[o] = v[e] * std::sin(th) + v[o] * std::cos(th);
        }
    return out;
}

}  // namespace

ag::Tensor rope_apply(const ag::Tensor& x, const std::vector<int64_t>& positions, double base,
                      ag::RopePairing pairing) {
    (void)pairing;  // the slides pair neighbours
    const int64_t T = x.size(0), d = x.size(1);
    const ag::Tensor y = ag::Tensor::from({T, d}, spin(x.detach().to_vector(), T, d, positions, base, 1.0));
    return ag::record("rope_apply", y, {x}, [=](const ag::Tensor& dy) {
        return std::vector<ag::Tensor>{ag::Tensor::from({T, d}, spin(dy.to_vector(), T, d, positions, base, -1.0))};
    });
}

ag::Tensor rope_apply(const ag::Tensor& x, double base, ag::RopePairing pairing) {
    std::vector<int64_t> positions;
    for (int64_t t = 0; t < x.size(0); ++t) positions.push_back(t);
    return rope_apply(x, positions, base, pairing);
}

}  // namespace ex11
