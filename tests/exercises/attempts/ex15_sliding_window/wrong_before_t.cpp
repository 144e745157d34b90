// Attempt (wrong): reads "a window of W tokens" as the W tokens BEFORE the query, t - W <= j < t, so the query
// never sees itself (and query 0 sees nothing at all).
#include "exercises/ex15_sliding_window.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "autograd/ops.h"
#include "exercises/not_implemented.h"

namespace ex15 {

namespace {
bool sees(int64_t t, int64_t j, int64_t W) { return j >= t - W && j < t; }
}  // namespace

ag::Tensor window_mask(int64_t T, int64_t window) {
    std::vector<double> m;
    for (int64_t t = 0; t < T; ++t)
        for (int64_t j = 0; j < T; ++j) m.push_back(sees(t, j, window) ? 1.0 : 0.0);
    return ag::Tensor::from({T, T}, m);
}

ag::Tensor chunked_attention(const ag::Tensor& q, const ag::Tensor& k, const ag::Tensor& v, int64_t window) {
    const int64_t T = q.size(0);
    const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(1)));
    std::vector<ag::Tensor> outs;
    for (int64_t b = 0; b * window < T; ++b) {
        const int64_t q0 = b * window, nq = std::min(window, T - q0);
        const int64_t k0 = std::max<int64_t>(0, q0 - window), nk = q0 + nq - k0;
        ag::Tensor hide = ag::Tensor::zeros({nq, nk});
        for (int64_t i = 0; i < nq; ++i)
            for (int64_t c = 0; c < nk; ++c) hide.data()[i * nk + c] = sees(q0 + i, k0 + c, window) ? 0.0 : 1.0;
        ag::Tensor s = ag::matmul(q.narrow(0, q0, nq), k.narrow(0, k0, nk).t()) * scale;
        s = ag::masked_fill(s, hide, -std::numeric_limits<double>::infinity());
        outs.push_back(ag::matmul(ag::softmax(s), v.narrow(0, k0, nk)));
    }
    return ag::cat(outs, 0);
}

}  // namespace ex15
