// Attempt (wrong): "hides" the future by setting its scores to 0 before the
// softmax; but exp(0) = 1, so future keys still get weight. Their scores
// must be -infinity so that their weight is exactly 0.
#include "exercises/ex14_gqa_attention.h"

#include <cmath>
#include <vector>

#include "exercises/not_implemented.h"

namespace ex14 {

int64_t kv_head(int64_t h, int64_t q_heads, int64_t kv_heads) { return h / (q_heads / kv_heads); }

ag::Tensor gqa_attention(const ag::Tensor& q, const ag::Tensor& k, const ag::Tensor& v) {
    const int64_t T = q.size(0), Hq = q.size(1), Hkv = k.size(1);
    const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(2)));
    std::vector<double> heads, future;
    for (int64_t h = 0; h < Hq; ++h) heads.push_back(static_cast<double>(kv_head(h, Hq, Hkv)));
    for (int64_t t = 0; t < T; ++t)
        for (int64_t j = 0; j < T; ++j) future.push_back(j > t ? 1.0 : 0.0);
    const ag::Tensor index = ag::Tensor::from({Hq}, heads);
    const ag::Tensor qh = ag::permute(q, {1, 0, 2});
    const ag::Tensor kh = ag::permute(ag::index_select(k, 1, index), {1, 2, 0});  // [Hq, dh, T]
    const ag::Tensor vh = ag::permute(ag::index_select(v, 1, index), {1, 0, 2});
    const ag::Tensor scores = ag::masked_fill(ag::matmul(qh, kh) * scale, ag::Tensor::from({T, T}, future), 0.0);
    return ag::permute(ag::matmul(ag::softmax(scores), vh), {1, 0, 2});
}

}  // namespace ex14
