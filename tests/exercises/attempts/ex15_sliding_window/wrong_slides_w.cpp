// Attempt (wrong): takes the slides' formula "the window holds w/2 + 1 tokens" and applies it to W, so a
// query sees W/2 + 1 tokens instead of W (the slides' w is Longformer's two-sided width, not Mistral's W).
#include "exercises/ex15_sliding_window.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "autograd/ops.h"
#include "exercises/not_implemented.h"

namespace ex15 {

namespace {
// number of tokens a query sees, as on the slides
int64_t tokens_seen(int64_t w) { return w / 2 + 1; }
}  // namespace

ag::Tensor window_mask(int64_t T, int64_t window) {
    const int64_t n = tokens_seen(window);
    ag::Tensor m = ag::Tensor::zeros({T, T});
    double* p = m.data();
    for (int64_t t = 0; t < T; ++t)
        for (int64_t j = std::max<int64_t>(0, t - n + 1); j <= t; ++j) p[t * T + j] = 1.0;
    return m;
}

ag::Tensor chunked_attention(const ag::Tensor& q, const ag::Tensor& k, const ag::Tensor& v, int64_t window) {
    const int64_t T = q.size(0), n = tokens_seen(window);
    const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(1)));
    std::vector<ag::Tensor> outs;
    for (int64_t start = 0; start < T; start += window) {
        const int64_t rows = std::min(window, T - start);
        const int64_t first = std::max<int64_t>(0, start - window), cols = start + rows - first;
        ag::Tensor hide = ag::Tensor::zeros({rows, cols});
        for (int64_t i = 0; i < rows; ++i)
            for (int64_t c = 0; c < cols; ++c) {
                const int64_t t = start + i, j = first + c;
                hide.data()[i * cols + c] = (j <= t && j > t - n) ? 0.0 : 1.0;
            }
        ag::Tensor s = ag::matmul(q.narrow(0, start, rows), k.narrow(0, first, cols).t()) * scale;
        outs.push_back(ag::matmul(ag::softmax(ag::masked_fill(s, hide, -std::numeric_limits<double>::infinity())),
                                  v.narrow(0, first, cols)));
    }
    return ag::cat(outs, 0);
}

}  // namespace ex15
