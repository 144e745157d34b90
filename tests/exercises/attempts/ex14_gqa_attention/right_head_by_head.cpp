// Attempt (right): a loop over the query heads: narrow q's head h and K/V
// head h·Hkv/Hq (the same as floor(h / g)), 2-D matmuls, the future hidden
// by adding a [T, T] bias of 0 and -infinity, then the heads stacked back.
#include "exercises/ex14_gqa_attention.h"

#include <cmath>
#include <limits>
#include <vector>

#include "exercises/not_implemented.h"

namespace ex14 {

int64_t kv_head(int64_t h, int64_t q_heads, int64_t kv_heads) { return h * kv_heads / q_heads; }

ag::Tensor gqa_attention(const ag::Tensor& q, const ag::Tensor& k, const ag::Tensor& v) {
    const int64_t T = q.size(0), Hq = q.size(1), Hkv = k.size(1), dh = q.size(2);
    std::vector<double> bias(static_cast<size_t>(T * T), 0.0);
    for (int64_t t = 0; t < T; ++t)
        for (int64_t j = t + 1; j < T; ++j)
            bias[static_cast<size_t>(t * T + j)] = -std::numeric_limits<double>::infinity();
    const ag::Tensor causal = ag::Tensor::from({T, T}, bias);
    const double scale = 1.0 / std::sqrt(static_cast<double>(dh));

    std::vector<ag::Tensor> heads;
    for (int64_t h = 0; h < Hq; ++h) {
        const int64_t g = kv_head(h, Hq, Hkv);
        const ag::Tensor qh = q.narrow(1, h, 1).reshape({T, dh});
        const ag::Tensor kh = k.narrow(1, g, 1).reshape({T, dh});
        const ag::Tensor vh = v.narrow(1, g, 1).reshape({T, dh});
        const ag::Tensor p = ag::softmax(ag::matmul(qh, kh.t()) * scale + causal);  // [T, T]
        heads.push_back(ag::matmul(p, vh));                                         // [T, dh]
    }
    return ag::stack(heads, 1);  // [T, Hq, dh]
}

}  // namespace ex14
