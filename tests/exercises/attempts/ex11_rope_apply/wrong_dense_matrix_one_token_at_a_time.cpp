// Attempt (wrong): builds the dense block-diagonal R_{Θ,m} of one token at a
// time and multiplies with matmul: only one d×d matrix in memory at once,
// but still O(d²) numbers and work per token where §4.6 (and the statement)
// ask for O(d), pair by pair.
#include "exercises/ex11_rope_apply.h"

#include <cmath>
#include <numeric>
#include <vector>

namespace ex11 {
namespace {

// The slides' R_{Θ,m} for one position m, written out as a d×d matrix.
ag::Tensor rotation_matrix(int64_t d, double m, double base, ag::RopePairing pairing) {
    std::vector<double> R(static_cast<size_t>(d * d), 0.0);
    const auto at = [&](int64_t row, int64_t col) -> double& { return R[static_cast<size_t>(row * d + col)]; };
    for (int64_t i = 0; i < d / 2; ++i) {
        const double angle = m * std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(d));
        const int64_t first = pairing == ag::RopePairing::Half ? i : 2 * i;
        const int64_t second = pairing == ag::RopePairing::Half ? i + d / 2 : 2 * i + 1;
        at(first, first) = at(second, second) = std::cos(angle);
        at(first, second) = -std::sin(angle);
        at(second, first) = std::sin(angle);
    }
    return ag::Tensor::from({d, d}, R);
}

// Row t of v times R_{Θ, sign·m_t}, one token after the other.
ag::Tensor turn_rows(const ag::Tensor& v, const std::vector<int64_t>& positions, double base, ag::RopePairing pairing,
                     double sign) {
    ag::NoGradGuard no_grad;
    const int64_t d = v.size(1);
    std::vector<ag::Tensor> rows;
    for (int64_t t = 0; t < v.size(0); ++t) {
        const double m = sign * static_cast<double>(positions[static_cast<size_t>(t)]);
        const ag::Tensor column = v.narrow(0, t, 1).contiguous().reshape({d, 1});
        rows.push_back(ag::matmul(rotation_matrix(d, m, base, pairing), column).reshape({1, d}));
    }
    return ag::cat(rows, 0).contiguous();
}

}  // namespace

ag::Tensor rope_apply(const ag::Tensor& x, const std::vector<int64_t>& positions, double base,
                      ag::RopePairing pairing) {
    ag::BackwardFn turn_back = [=](const ag::Tensor& dy) -> std::vector<ag::Tensor> {
        return {turn_rows(dy, positions, base, pairing, -1.0)};  // Rᵀ: the same angles, the other way
    };
    return ag::record("rope_apply", turn_rows(x, positions, base, pairing, 1.0), {x}, turn_back);
}

ag::Tensor rope_apply(const ag::Tensor& x, double base, ag::RopePairing pairing) {
    std::vector<int64_t> positions(static_cast<size_t>(x.size(0)));
    std::iota(positions.begin(), positions.end(), int64_t{0});
    return rope_apply(x, positions, base, pairing);
}

}  // namespace ex11
