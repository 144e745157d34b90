// Attempt (wrong): a "stable" softmax that subtracts the max over ALL keys,
// future ones included, and zeroes the future after exp by multiplying with
// the causal mask. Equal on paper, but when a future score is much larger
// than every visible one, all the visible weights underflow to 0 and 0/0
// is NaN: mask with -infinity before the softmax.
#include "exercises/ex14_gqa_attention.h"

#include <cmath>
#include <vector>

#include "exercises/not_implemented.h"

namespace ex14 {

int64_t kv_head(int64_t h, int64_t q_heads, int64_t kv_heads) {
    const int64_t g = q_heads / kv_heads;
    return h / g;
}

ag::Tensor gqa_attention(const ag::Tensor& q, const ag::Tensor& k, const ag::Tensor& v) {
    const int64_t T = q.size(0), Hq = q.size(1), dh = q.size(2), Hkv = k.size(1);
    std::vector<ag::Tensor> outs;
    std::vector<double> lower;  // 1 where key j ≤ query t
    for (int64_t t = 0; t < T; ++t)
        for (int64_t j = 0; j < T; ++j) lower.push_back(j <= t ? 1.0 : 0.0);
    const ag::Tensor keep = ag::Tensor::from({T, T}, lower);
    for (int64_t h = 0; h < Hq; ++h) {
        const int64_t kv = kv_head(h, Hq, Hkv);
        const ag::Tensor qh = q.narrow(1, h, 1).reshape({T, dh});
        const ag::Tensor kh = k.narrow(1, kv, 1).reshape({T, dh});
        const ag::Tensor vh = v.narrow(1, kv, 1).reshape({T, dh});
        const ag::Tensor s = ag::matmul(qh, kh.transpose(0, 1)) / std::sqrt(static_cast<double>(dh));
        const ag::Tensor e = ag::exp(s - ag::max(s, 1, true)) * keep;
        const ag::Tensor p = e / ag::sum(e, {1}, true);
        outs.push_back(ag::matmul(p, vh));  // [T, dh]
    }
    return ag::stack(outs, 1);
}

}  // namespace ex14
