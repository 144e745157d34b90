// Exercise 15 · sliding-window attention: reference solution (lecture §6.1,
// §6.2).
#include "exercises/ex15_sliding_window.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "autograd/ops.h"

namespace ex15 {
namespace {

// §6.1 query t sees key j iff j is one of the W most recent positions:
// t - W < j <= t (W tokens, t itself included).
bool visible(int64_t t, int64_t j, int64_t window) { return t - window < j && j <= t; }

constexpr double kMinusInfinity = -std::numeric_limits<double>::infinity();

}  // namespace

ag::Tensor window_mask(int64_t T, int64_t window) {
    ag::Tensor mask = ag::Tensor::zeros({T, T});
    double* m = mask.data();
    for (int64_t t = 0; t < T; ++t)
        for (int64_t j = 0; j < T; ++j) m[t * T + j] = visible(t, j, window) ? 1.0 : 0.0;
    return mask;
}

// §6.2 sliding chunks. Chunk b holds the queries start = bW … start+n-1
// (n = W, or fewer in the last chunk). Query t >= start sees keys from
// t-W+1 >= start-W+1 on, so the keys of chunks b-1 and b, rows
// first = max(0, start-W) … start+n-1, are all it can need: a score block of
// n × (at most 2W), the part outside the window masked to -inf. Each block
// is O(W²) and there are T/W of them: O(T·W) work and memory.
ag::Tensor chunked_attention(const ag::Tensor& q, const ag::Tensor& k, const ag::Tensor& v, int64_t window) {
    const int64_t T = q.size(0), d = q.size(1);
    const double scale = 1.0 / std::sqrt(static_cast<double>(d));
    std::vector<ag::Tensor> chunks;
    for (int64_t start = 0; start < T; start += window) {
        const int64_t n = std::min(window, T - start);
        const int64_t first = std::max<int64_t>(0, start - window), m = start + n - first;
        const ag::Tensor scores = ag::matmul(q.narrow(0, start, n), k.narrow(0, first, m).t()) * scale;  // [n, m]
        // 1 where query start+i may not see key first+c: masked_fill puts
        // -inf there, which the softmax turns into weight 0 (every query
        // sees at least itself, so no row is all -inf).
        ag::Tensor hidden = ag::Tensor::zeros({n, m});
        double* h = hidden.data();
        for (int64_t i = 0; i < n; ++i)
            for (int64_t c = 0; c < m; ++c) h[i * m + c] = visible(start + i, first + c, window) ? 0.0 : 1.0;
        const ag::Tensor p = ag::softmax(ag::masked_fill(scores, hidden, kMinusInfinity));
        chunks.push_back(ag::matmul(p, v.narrow(0, first, m)));  // [n, d]
    }
    return ag::cat(chunks, 0);
}

}  // namespace ex15
