// Attempt (wrong): assumes W divides T and loops over T / W full chunks, so when it does not the last,
// shorter chunk is never computed (the output has fewer than T rows).
#include "exercises/ex15_sliding_window.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "autograd/ops.h"
#include "exercises/not_implemented.h"

namespace ex15 {

ag::Tensor window_mask(int64_t T, int64_t window) {
    ag::Tensor m = ag::Tensor::zeros({T, T});
    for (int64_t t = 0; t < T; ++t)
        for (int64_t j = 0; j < T; ++j) m.data()[t * T + j] = (t - window < j && j <= t) ? 1.0 : 0.0;
    return m;
}

ag::Tensor chunked_attention(const ag::Tensor& q, const ag::Tensor& k, const ag::Tensor& v, int64_t window) {
    const int64_t T = q.size(0), W = window;
    const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(1)));
    std::vector<ag::Tensor> out;
    const int64_t chunks = std::max<int64_t>(1, T / W);
    for (int64_t b = 0; b < chunks; ++b) {
        const int64_t first = b == 0 ? 0 : (b - 1) * W, m = (b == 0 ? W : 2 * W);
        const int64_t n = std::min(W, T);
        ag::Tensor hidden = ag::Tensor::zeros({n, std::min(m, T)});
        const int64_t cols = std::min(m, T);
        for (int64_t i = 0; i < n; ++i)
            for (int64_t c = 0; c < cols; ++c)
                hidden.data()[i * cols + c] = (b * W + i - W < first + c && first + c <= b * W + i) ? 0.0 : 1.0;
        const ag::Tensor s = ag::matmul(q.narrow(0, b * W, n), k.narrow(0, first, cols).t()) * scale;
        out.push_back(ag::matmul(ag::softmax(ag::masked_fill(s, hidden, -std::numeric_limits<double>::infinity())),
                                 v.narrow(0, first, cols)));
    }
    return ag::cat(out, 0);
}

}  // namespace ex15
