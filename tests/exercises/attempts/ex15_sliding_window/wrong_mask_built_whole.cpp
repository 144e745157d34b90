// Attempt (wrong): the chunks are right, but each chunk's mask is cut out of one [T, T] window mask built
// first with window_mask(T, W) (narrow, then contiguous() to own it). No graph keeps the big mask, yet it is
// T² numbers in memory at once: the O(T·W) of §6.2 is lost.
#include "exercises/ex15_sliding_window.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "autograd/ops.h"
#include "exercises/not_implemented.h"

namespace ex15 {

ag::Tensor window_mask(int64_t T, int64_t window) {
    std::vector<double> m(static_cast<size_t>(T * T), 0.0);
    for (int64_t t = 0; t < T; ++t)
        for (int64_t j = std::max<int64_t>(0, t - window + 1); j <= t; ++j) m[static_cast<size_t>(t * T + j)] = 1.0;
    return ag::Tensor::from({T, T}, m);
}

ag::Tensor chunked_attention(const ag::Tensor& q, const ag::Tensor& k, const ag::Tensor& v, int64_t window) {
    const int64_t T = q.size(0), d = q.size(1);
    const ag::Tensor full = window_mask(T, window);
    const ag::Tensor hidden_everywhere = 1.0 - full;  // 1 where a key is hidden
    std::vector<ag::Tensor> outputs;
    for (int64_t start = 0; start < T; start += window) {
        const int64_t n = std::min(window, T - start), first = std::max<int64_t>(0, start - window);
        const int64_t m = start + n - first;
        const ag::Tensor hidden = hidden_everywhere.narrow(0, start, n).narrow(1, first, m).contiguous();
        const ag::Tensor scores =
            ag::matmul(q.narrow(0, start, n), k.narrow(0, first, m).t()) / std::sqrt(static_cast<double>(d));
        const ag::Tensor weights =
            ag::softmax(ag::masked_fill(scores, hidden, -std::numeric_limits<double>::infinity()));
        outputs.push_back(ag::matmul(weights, v.narrow(0, first, m)));
    }
    return ag::cat(outputs, 0);
}

}  // namespace ex15
