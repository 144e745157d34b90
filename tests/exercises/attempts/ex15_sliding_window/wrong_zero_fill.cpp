// Attempt (wrong): "masking" sets the hidden scores to 0 instead of -inf, so keys outside the window still
// get weight exp(0) / Σ in the softmax.
#include "exercises/ex15_sliding_window.h"

#include <algorithm>
#include <cmath>
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
    const int64_t T = q.size(0);
    const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(1)));
    std::vector<ag::Tensor> out;
    for (int64_t start = 0; start < T; start += window) {
        const int64_t n = std::min(window, T - start), first = std::max<int64_t>(0, start - window);
        const int64_t m = start + n - first;
        ag::Tensor keep = ag::Tensor::zeros({n, m});
        for (int64_t i = 0; i < n; ++i)
            for (int64_t c = 0; c < m; ++c)
                keep.data()[i * m + c] = (start + i - window < first + c && first + c <= start + i) ? 1.0 : 0.0;
        // zero out the scores the query may not see
        const ag::Tensor s = ag::matmul(q.narrow(0, start, n), k.narrow(0, first, m).t()) * scale * keep;
        out.push_back(ag::matmul(ag::softmax(s), v.narrow(0, first, m)));
    }
    return ag::cat(out, 0);
}

}  // namespace ex15
