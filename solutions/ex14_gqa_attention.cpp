// Exercise 14 · causal grouped-query attention from engine ops: reference
// solution (lecture §5.2).
#include "exercises/ex14_gqa_attention.h"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

namespace ex14 {

// Consecutive groups: query heads h·… share K/V head floor(h / g).
int64_t kv_head(int64_t h, int64_t q_heads, int64_t kv_heads) { return h / (q_heads / kv_heads); }

// GQA = MHA on K/V heads copied g times (§5.2): pick K/V head kv_head(h) for
// every query head h, then per head
//   out = softmax(mask(q kᵀ / sqrt(dh))) v,   mask: -inf where key j > query t.
ag::Tensor gqa_attention(const ag::Tensor& q, const ag::Tensor& k, const ag::Tensor& v) {
    const int64_t T = q.size(0), Hq = q.size(1), dh = q.size(2), Hkv = k.size(1);
    if (k.shape() != v.shape() || k.size(0) != T || k.size(2) != dh || Hkv == 0 || Hq % Hkv != 0)
        throw std::invalid_argument("gqa_attention: q " + ag::shape_str(q.shape()) + ", k " + ag::shape_str(k.shape()) +
                                    ", v " + ag::shape_str(v.shape()) + " do not fit [T, Hq, dh], [T, Hkv, dh]");
    std::vector<double> heads;  // the K/V head of each query head
    for (int64_t h = 0; h < Hq; ++h) heads.push_back(static_cast<double>(kv_head(h, Hq, Hkv)));
    const ag::Tensor index = ag::Tensor::from({Hq}, heads);
    // [T, H, dh] -> [H, T, dh]: one attention matrix per query head.
    const ag::Tensor qh = q.permute({1, 0, 2});
    const ag::Tensor kh = ag::index_select(k, 1, index).permute({1, 0, 2});
    const ag::Tensor vh = ag::index_select(v, 1, index).permute({1, 0, 2});
    const ag::Tensor scores = ag::matmul(qh, kh.transpose(1, 2)) / std::sqrt(static_cast<double>(dh));  // [Hq, T, T]
    std::vector<double> future(static_cast<size_t>(T * T));  // 1 where key j comes after query t
    for (int64_t t = 0; t < T; ++t)
        for (int64_t j = 0; j < T; ++j) future[static_cast<size_t>(t * T + j)] = j > t ? 1.0 : 0.0;
    const ag::Tensor masked =
        ag::masked_fill(scores, ag::Tensor::from({T, T}, future), -std::numeric_limits<double>::infinity());
    return ag::matmul(ag::softmax(masked), vh).permute({1, 0, 2}).contiguous();  // [T, Hq, dh]
}

}  // namespace ex14
