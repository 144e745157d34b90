// Attempt (right): chunks indexed by b, the window rule written as an additive bias (0 where visible, -inf
// where not) built from the offsets t - j of the block, added to the scores with ag::add; the block keys are
// chunk b-1 and b, found as rows lo … hi.
#include "exercises/ex15_sliding_window.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "autograd/ops.h"
#include "exercises/not_implemented.h"

namespace ex15 {

namespace {

// bias[i][c] for queries q0 + i and keys k0 + c: 0 if 0 <= t - j < W, else -inf.
ag::Tensor window_bias(int64_t q0, int64_t nq, int64_t k0, int64_t nk, int64_t W) {
    std::vector<double> b;
    b.reserve(static_cast<size_t>(nq * nk));
    for (int64_t i = 0; i < nq; ++i)
        for (int64_t c = 0; c < nk; ++c) {
            const int64_t lag = (q0 + i) - (k0 + c);
            b.push_back(lag >= 0 && lag < W ? 0.0 : -std::numeric_limits<double>::infinity());
        }
    return ag::Tensor::from({nq, nk}, b);
}

}  // namespace

ag::Tensor window_mask(int64_t T, int64_t window) {
    const ag::Tensor bias = window_bias(0, T, 0, T, window);
    std::vector<double> m = bias.to_vector();
    for (double& x : m) x = x == 0.0 ? 1.0 : 0.0;
    return ag::Tensor::from({T, T}, m);
}

ag::Tensor chunked_attention(const ag::Tensor& q, const ag::Tensor& k, const ag::Tensor& v, int64_t window) {
    const int64_t T = q.size(0), W = window;
    const double d = static_cast<double>(q.size(1));
    const int64_t chunks = (T + W - 1) / W;
    std::vector<ag::Tensor> parts;
    for (int64_t b = 0; b < chunks; ++b) {
        const int64_t lo = std::max<int64_t>(0, (b - 1) * W), q0 = b * W, hi = std::min(T, (b + 1) * W);
        const ag::Tensor scores = ag::matmul(q.narrow(0, q0, hi - q0), k.narrow(0, lo, hi - lo).t()) / std::sqrt(d);
        const ag::Tensor p = ag::softmax(ag::add(scores, window_bias(q0, hi - q0, lo, hi - lo, W)));
        parts.push_back(ag::matmul(p, v.narrow(0, lo, hi - lo)));
    }
    return ag::cat(parts, 0);
}

}  // namespace ex15
