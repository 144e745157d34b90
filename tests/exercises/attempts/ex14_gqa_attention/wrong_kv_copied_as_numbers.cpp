// Attempt (wrong): copies the K/V head of every query head as plain numbers
// (to_vector, Tensor::from): "it is only a copy"; but the copy is not an
// op, so no gradient reaches k and v, and training would never update W_k
// and W_v.
#include "exercises/ex14_gqa_attention.h"

#include <cmath>
#include <vector>

#include "exercises/not_implemented.h"

namespace ex14 {

namespace {

// [T, T]: 1 where key j lies in query t's future (j > t), else 0.
ag::Tensor future_mask(int64_t T) {
    std::vector<double> m(static_cast<size_t>(T * T), 0.0);
    for (int64_t t = 0; t < T; ++t)
        for (int64_t j = 0; j < T; ++j)
            if (j > t) m[static_cast<size_t>(t * T + j)] = 1.0;
    return ag::Tensor::from({T, T}, m);
}

// The K/V heads of every query head: [T, Hkv, dh] -> [T, Hq, dh].
ag::Tensor per_query_head(const ag::Tensor& kv, int64_t q_heads) {
    const int64_t kv_heads = kv.size(1);
    const int64_t T = kv.size(0), dh = kv.size(2);
    std::vector<double> copied;
    for (int64_t t = 0; t < T; ++t)
        for (int64_t h = 0; h < q_heads; ++h)
            for (int64_t e = 0; e < dh; ++e) copied.push_back(kv.at({t, kv_head(h, q_heads, kv_heads), e}));
    return ag::Tensor::from({T, q_heads, dh}, copied);
}

}  // namespace

int64_t kv_head(int64_t h, int64_t q_heads, int64_t kv_heads) { return h / (q_heads / kv_heads); }

ag::Tensor gqa_attention(const ag::Tensor& q, const ag::Tensor& k, const ag::Tensor& v) {
    const int64_t T = q.size(0), Hq = q.size(1), dh = q.size(2);
    const ag::Tensor qh = ag::permute(q, {1, 0, 2});                      // [Hq, T, dh]
    const ag::Tensor kh = ag::permute(per_query_head(k, Hq), {1, 0, 2});  // [Hq, T, dh]
    const ag::Tensor vh = ag::permute(per_query_head(v, Hq), {1, 0, 2});  // [Hq, T, dh]
    ag::Tensor scores = ag::matmul(qh, ag::transpose(kh, 1, 2)) / std::sqrt(static_cast<double>(dh));
    scores = ag::masked_fill(scores, future_mask(T), -INFINITY);
    const ag::Tensor weights = ag::softmax(scores);  // over the keys
    const ag::Tensor out = ag::matmul(weights, vh);  // [Hq, T, dh]
    return ag::permute(out, {1, 0, 2});
}

}  // namespace ex14
