// Attempt (wrong): computes all T×T scores once and masks them with window_mask (the naive implementation,
// misconception 7): the values are right, but the graph keeps O(T²) numbers where O(T·W) is asked.
#include "exercises/ex15_sliding_window.h"

#include <cmath>
#include <limits>

#include "autograd/ops.h"
#include "exercises/not_implemented.h"

namespace ex15 {

ag::Tensor window_mask(int64_t T, int64_t window) {
    ag::Tensor m = ag::Tensor::zeros({T, T});
    for (int64_t t = 0; t < T; ++t)
        for (int64_t j = 0; j < T; ++j)
            if (j <= t && j > t - window) m.data()[t * T + j] = 1.0;
    return m;
}

// Masking is the whole trick: every score outside the window becomes -inf.
ag::Tensor chunked_attention(const ag::Tensor& q, const ag::Tensor& k, const ag::Tensor& v, int64_t window) {
    const int64_t T = q.size(0);
    const double d = static_cast<double>(q.size(1));
    ag::Tensor scores = ag::matmul(q, k.t()) / std::sqrt(d);
    ag::Tensor outside = 1.0 - window_mask(T, window);
    scores = ag::masked_fill(scores, outside, -std::numeric_limits<double>::infinity());
    return ag::matmul(ag::softmax(scores), v);
}

}  // namespace ex15
