// Attempt (wrong): when the window covers the whole sequence (W >= T) it is "just causal attention", so it
// calls the engine's ag::causal_attention there instead of building the (single) chunk from engine ops.
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
        for (int64_t j = std::max<int64_t>(0, t - window + 1); j <= t; ++j) m.data()[t * T + j] = 1.0;
    return m;
}

ag::Tensor chunked_attention(const ag::Tensor& q, const ag::Tensor& k, const ag::Tensor& v, int64_t window) {
    const int64_t T = q.size(0), d = q.size(1);
    if (window >= T) {  // one chunk: no window at all
        const auto as_heads = [&](const ag::Tensor& x) { return x.reshape({1, T, 1, d}); };
        return ag::causal_attention(as_heads(q), as_heads(k), as_heads(v)).reshape({T, d});
    }
    const double scale = 1.0 / std::sqrt(static_cast<double>(d));
    std::vector<ag::Tensor> out;
    for (int64_t start = 0; start < T; start += window) {
        const int64_t n = std::min(window, T - start), first = std::max<int64_t>(0, start - window);
        const int64_t m = start + n - first;
        ag::Tensor hidden = ag::Tensor::zeros({n, m});
        for (int64_t i = 0; i < n; ++i)
            for (int64_t c = 0; c < m; ++c)
                hidden.data()[i * m + c] = (start + i - window < first + c && first + c <= start + i) ? 0.0 : 1.0;
        const ag::Tensor s = ag::matmul(q.narrow(0, start, n), k.narrow(0, first, m).t()) * scale;
        out.push_back(ag::matmul(ag::softmax(ag::masked_fill(s, hidden, -std::numeric_limits<double>::infinity())),
                                 v.narrow(0, first, m)));
    }
    return ag::cat(out, 0);
}

}  // namespace ex15
