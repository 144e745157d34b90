// Attempt (right): the §4.6 matrix form with engine ops on detached numbers:
// y = x ⊙ cos C + partner(x) ⊙ sign ⊙ sin C, where partner(x)_j is the other
// dim of j's pair (index_select) and sign is -1 on a pair's first dim, +1 on
// its second. The backward is the same with sin C negated (Rᵀ = R_{-m}).
#include "exercises/ex11_rope_apply.h"

#include <cmath>

#include "exercises/not_implemented.h"

namespace ex11 {

namespace {

// The tables of the §4.6 matrix form for x [T, d].
struct Tables {
    ag::Tensor cos_c, signed_sin_c, partner;
};

Tables tables(int64_t T, int64_t d, const std::vector<int64_t>& positions, double base, ag::RopePairing pairing) {
    const int64_t half = d / 2;
    std::vector<double> cos_c, sin_c, partner(static_cast<size_t>(d));
    std::vector<int64_t> pair_of(static_cast<size_t>(d));
    std::vector<double> sign(static_cast<size_t>(d));
    for (int64_t i = 0; i < half; ++i) {
        const int64_t a = pairing == ag::RopePairing::Half ? i : 2 * i;
        const int64_t b = pairing == ag::RopePairing::Half ? i + half : 2 * i + 1;
        pair_of[static_cast<size_t>(a)] = pair_of[static_cast<size_t>(b)] = i;
        partner[static_cast<size_t>(a)] = static_cast<double>(b);
        partner[static_cast<size_t>(b)] = static_cast<double>(a);
        sign[static_cast<size_t>(a)] = -1.0;
        sign[static_cast<size_t>(b)] = 1.0;
    }
    for (int64_t t = 0; t < T; ++t)
        for (int64_t j = 0; j < d; ++j) {
            const double theta =
                std::pow(base, -2.0 * static_cast<double>(pair_of[static_cast<size_t>(j)]) / static_cast<double>(d));
            const double angle = static_cast<double>(positions[static_cast<size_t>(t)]) * theta;
            cos_c.push_back(std::cos(angle));
            sin_c.push_back(sign[static_cast<size_t>(j)] * std::sin(angle));
        }
    return {ag::Tensor::from({T, d}, cos_c), ag::Tensor::from({T, d}, sin_c), ag::Tensor::from({d}, partner)};
}

// x ⊙ cos C + partner(x) ⊙ (±sin C), turned forward (+1) or back (-1).
ag::Tensor apply(const Tables& tb, const ag::Tensor& x, double direction) {
    return x * tb.cos_c + ag::index_select(x, 1, tb.partner) * tb.signed_sin_c * direction;
}

}  // namespace

ag::Tensor rope_apply(const ag::Tensor& x, const std::vector<int64_t>& positions, double base,
                      ag::RopePairing pairing) {
    const Tables tb = tables(x.size(0), x.size(1), positions, base, pairing);
    const ag::Tensor y = apply(tb, x.detach(), 1.0);
    return ag::record("rope_apply", y, {x},
                      [tb](const ag::Tensor& dy) { return std::vector<ag::Tensor>{apply(tb, dy.detach(), -1.0)}; });
}

ag::Tensor rope_apply(const ag::Tensor& x, double base, ag::RopePairing pairing) {
    std::vector<int64_t> positions;
    for (int64_t t = 0; t < x.size(0); ++t) positions.push_back(t);
    return rope_apply(x, positions, base, pairing);
}

}  // namespace ex11
