// Attempt (wrong): the lecture's "for loop" version instead of the chunks asked for: each query t scores
// exactly the keys max(0, t-W+1) … t (a narrow, so no mask at all), softmax, times the same rows of v; the
// rows are concatenated. The output, gradients and O(T·W) memory are right, but it is T small products,
// where the sliding chunks compute the same scores W queries at a time in regular matrix products (§6.2).
// grade says: you worked one query at a time
#include "exercises/ex15_sliding_window.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "autograd/ops.h"
#include "exercises/not_implemented.h"

namespace ex15 {

ag::Tensor window_mask(int64_t T, int64_t window) {
    std::vector<double> rows(static_cast<size_t>(T * T), 0.0);
    for (int64_t t = 0; t < T; ++t) {
        const int64_t oldest = std::max<int64_t>(0, t - window + 1);
        std::fill(rows.begin() + t * T + oldest, rows.begin() + t * T + t + 1, 1.0);
    }
    return ag::Tensor::from({T, T}, rows);
}

ag::Tensor chunked_attention(const ag::Tensor& q, const ag::Tensor& k, const ag::Tensor& v, int64_t window) {
    const int64_t T = q.size(0);
    const double inv_sqrt_d = 1.0 / std::sqrt(static_cast<double>(q.size(1)));
    std::vector<ag::Tensor> rows;
    rows.reserve(static_cast<size_t>(T));
    for (int64_t t = 0; t < T; ++t) {
        const int64_t oldest = std::max<int64_t>(0, t - window + 1), n = t - oldest + 1;
        const ag::Tensor keys = k.narrow(0, oldest, n), vals = v.narrow(0, oldest, n);
        const ag::Tensor p = ag::softmax(ag::matmul(q.narrow(0, t, 1), keys.t()) * inv_sqrt_d);  // [1, n]
        rows.push_back(ag::matmul(p, vals));
    }
    return ag::cat(rows, 0);
}

}  // namespace ex15
