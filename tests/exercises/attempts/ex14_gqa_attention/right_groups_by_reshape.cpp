// Attempt (right): no copies of K/V heads; q is reshaped into its groups
// [Hkv, g, T, dh] and k, v into [Hkv, 1, T, dh], so one batched matmul
// broadcasts each K/V head over its g query heads. The softmax is written
// out: subtract the row's max (ag::max, no gradient needed), exp, normalise.
#include "exercises/ex14_gqa_attention.h"

#include <cmath>
#include <limits>
#include <vector>

#include "exercises/not_implemented.h"

namespace ex14 {

int64_t kv_head(int64_t h, int64_t q_heads, int64_t kv_heads) {
    const int64_t group = q_heads / kv_heads;
    return h / group;
}

ag::Tensor gqa_attention(const ag::Tensor& q, const ag::Tensor& k, const ag::Tensor& v) {
    const int64_t T = q.size(0), Hq = q.size(1), dh = q.size(2), Hkv = k.size(1), g = Hq / Hkv;
    // Query head h = kv · g + i sits at [kv, i] of the grouped layout.
    const ag::Tensor qg = q.reshape({T, Hkv, g, dh}).permute({1, 2, 0, 3});  // [Hkv, g, T, dh]
    const ag::Tensor kg = k.permute({1, 0, 2}).reshape({Hkv, 1, T, dh});
    const ag::Tensor vg = v.permute({1, 0, 2}).reshape({Hkv, 1, T, dh});
    const ag::Tensor scores = ag::matmul(qg, kg.transpose(2, 3)) * (1.0 / std::sqrt(static_cast<double>(dh)));
    std::vector<double> upper;  // 1 above the diagonal: the keys a query must not see
    for (int64_t t = 0; t < T; ++t)
        for (int64_t j = 0; j < T; ++j) upper.push_back(j > t ? 1.0 : 0.0);
    const ag::Tensor masked =
        ag::masked_fill(scores, ag::Tensor::from({T, T}, upper), -std::numeric_limits<double>::infinity());
    const ag::Tensor shifted = masked - ag::max(masked, 3, true);  // the diagonal is always visible: finite max
    const ag::Tensor e = ag::exp(shifted);
    const ag::Tensor weights = e / ag::sum(e, {3}, true);
    return ag::matmul(weights, vg).permute({2, 0, 1, 3}).reshape({T, Hq, dh});  // [T, Hkv, g, dh] -> [T, Hq, dh]
}

}  // namespace ex14
