// Attempt (wrong): takes m to be the row index t of x ("the t-th token is at
// position t"), so the given positions are ignored; m is each token's own
// absolute position, positions[t] (a chunk of a long text, a KV cache).
#include "exercises/ex11_rope_apply.h"

#include <cmath>

#include "exercises/not_implemented.h"

namespace ex11 {

namespace {

ag::Tensor turn(const ag::Tensor& x, double base, ag::RopePairing pairing, bool inverse) {
    const ag::Tensor xc = x.detach().contiguous();
    const int64_t T = xc.size(0), d = xc.size(1);
    ag::Tensor y = xc.clone();
    const double* src = xc.data();
    double* dst = y.data();
    for (int64_t i = 0; i < d / 2; ++i) {
        const double theta = std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(d));
        const int64_t a = pairing == ag::RopePairing::Half ? i : 2 * i;
        const int64_t b = pairing == ag::RopePairing::Half ? i + d / 2 : 2 * i + 1;
        for (int64_t t = 0; t < T; ++t) {
            const double angle = (inverse ? -1.0 : 1.0) * static_cast<double>(t) * theta;
            dst[t * d + a] = src[t * d + a] * std::cos(angle) - src[t * d + b] * std::sin(angle);
            dst[t * d + b] = src[t * d + a] * std::sin(angle) + src[t * d + b] * std::cos(angle);
        }
    }
    return y;
}

}  // namespace

ag::Tensor rope_apply(const ag::Tensor& x, const std::vector<int64_t>& positions, double base,
                      ag::RopePairing pairing) {
    (void)positions;  // row t is token t
    return ag::record("rope_apply", turn(x, base, pairing, false), {x}, [base, pairing](const ag::Tensor& dy) {
        return std::vector<ag::Tensor>{turn(dy, base, pairing, true)};
    });
}

ag::Tensor rope_apply(const ag::Tensor& x, double base, ag::RopePairing pairing) {
    return rope_apply(x, std::vector<int64_t>(static_cast<size_t>(x.size(0)), 0), base, pairing);
}

}  // namespace ex11
