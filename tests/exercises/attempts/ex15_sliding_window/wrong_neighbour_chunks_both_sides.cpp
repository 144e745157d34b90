// Attempt (wrong): reads "neighbouring chunks" as Longformer's, both sides: chunk b scores the keys of
// chunks b-1, b and b+1 and lets the causal mask hide the later ones. The output is right and the memory
// O(T·W), but every key of chunk b+1 is in the future of every query of chunk b: a third of the scores
// are computed only to be thrown away, where §6.2's block is (≤ W) × (≤ 2W).
#include "exercises/ex15_sliding_window.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "autograd/ops.h"
#include "exercises/not_implemented.h"

namespace ex15 {

namespace {
bool sees(int64_t query, int64_t key, int64_t window) { return key <= query && query - key < window; }
}  // namespace

ag::Tensor window_mask(int64_t T, int64_t window) {
    std::vector<double> m;
    for (int64_t t = 0; t < T; ++t)
        for (int64_t j = 0; j < T; ++j) m.push_back(sees(t, j, window) ? 1.0 : 0.0);
    return ag::Tensor::from({T, T}, m);
}

ag::Tensor chunked_attention(const ag::Tensor& q, const ag::Tensor& k, const ag::Tensor& v, int64_t window) {
    const int64_t T = q.size(0);
    const double inv_sqrt_d = 1.0 / std::sqrt(static_cast<double>(q.size(1)));
    std::vector<ag::Tensor> rows;
    for (int64_t b = 0; b * window < T; ++b) {
        const int64_t q0 = b * window, nq = std::min(window, T - q0);
        const int64_t k0 = std::max<int64_t>(0, q0 - window), k1 = std::min(T, q0 + 2 * window);  // b-1, b, b+1
        std::vector<double> hide;
        for (int64_t i = q0; i < q0 + nq; ++i)
            for (int64_t j = k0; j < k1; ++j) hide.push_back(sees(i, j, window) ? 0.0 : 1.0);
        const ag::Tensor scores = ag::matmul(q.narrow(0, q0, nq), k.narrow(0, k0, k1 - k0).t()) * inv_sqrt_d;
        const ag::Tensor masked =
            ag::masked_fill(scores, ag::Tensor::from({nq, k1 - k0}, hide), -std::numeric_limits<double>::infinity());
        rows.push_back(ag::matmul(ag::softmax(masked), v.narrow(0, k0, k1 - k0)));
    }
    return ag::cat(rows, 0);
}

}  // namespace ex15
