// Attempt (wrong): saves a [T, d] copy by scaling the caller's q in place (q.data()[i] /= √d)
// before the chunks: the output is right once, but q is left changed
#include "exercises/ex15_sliding_window.h"

#include <cmath>
#include <limits>
#include <vector>

#include "autograd/ops.h"

namespace ex15 {

ag::Tensor window_mask(int64_t T, int64_t window) {
    std::vector<double> m(static_cast<size_t>(T * T), 0.0);
    for (int64_t t = 0; t < T; ++t)
        for (int64_t j = 0; j < T; ++j)
            if (t - window < j && j <= t) m[static_cast<size_t>(t * T + j)] = 1.0;
    return ag::Tensor::from({T, T}, m);
}

static ag::Tensor hidden_mask(int64_t q0, int64_t nq, int64_t k0, int64_t nk, int64_t W) {
    std::vector<double> m(static_cast<size_t>(nq * nk), 0.0);
    for (int64_t i = 0; i < nq; ++i)
        for (int64_t jj = 0; jj < nk; ++jj) {
            const int64_t t = q0 + i, j = k0 + jj;
            if (!(t - W < j && j <= t)) m[static_cast<size_t>(i * nk + jj)] = 1.0;
        }
    return ag::Tensor::from({nq, nk}, m);
}

ag::Tensor chunked_attention(const ag::Tensor& q, const ag::Tensor& k, const ag::Tensor& v, int64_t window) {
    const int64_t T = q.size(0), d = q.size(1), W = window;
    const double scale = 1.0;
    ag::Tensor qs = q;
    for (int64_t t = 0; t < T; ++t)
        for (int64_t i = 0; i < d; ++i)
            qs.data()[t * qs.strides()[0] + i * qs.strides()[1]] /= std::sqrt(static_cast<double>(d));
    std::vector<ag::Tensor> outs;
    for (int64_t q0 = 0; q0 < T; q0 += W) {
        const int64_t nq = std::min(W, T - q0);
        const int64_t k0 = std::max<int64_t>(0, q0 - W);
        const int64_t nk = q0 + nq - k0;
        ag::Tensor qb = ag::narrow(q, 0, q0, nq);
        ag::Tensor kb = ag::narrow(k, 0, k0, nk);
        ag::Tensor vb = ag::narrow(v, 0, k0, nk);
        ag::Tensor s = ag::matmul(qb, ag::transpose(kb, 0, 1)) * scale;
        s = ag::masked_fill(s, hidden_mask(q0, nq, k0, nk, W), -std::numeric_limits<double>::infinity());
        outs.push_back(ag::matmul(ag::softmax(s), vb));
    }
    return ag::cat(outs, 0);
}

}  // namespace ex15
