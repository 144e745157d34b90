// Attempt (wrong): scales the scores by 1/sqrt(d_model) with d_model = Hq·dh,
// the width of the whole layer, as if there were one big head; each head's
// scores are q·k over dh numbers and are scaled by 1/sqrt(dh).
#include "exercises/ex14_gqa_attention.h"

#include <cmath>
#include <limits>
#include <vector>

#include "exercises/not_implemented.h"

namespace ex14 {

int64_t kv_head(int64_t h, int64_t q_heads, int64_t kv_heads) { return h / (q_heads / kv_heads); }

ag::Tensor gqa_attention(const ag::Tensor& q, const ag::Tensor& k, const ag::Tensor& v) {
    const int64_t T = q.size(0), Hq = q.size(1), dh = q.size(2), Hkv = k.size(1);
    const double d_model = static_cast<double>(Hq * dh);
    std::vector<double> kv;
    for (int64_t h = 0; h < Hq; ++h) kv.push_back(static_cast<double>(kv_head(h, Hq, Hkv)));
    const ag::Tensor sel = ag::Tensor::from({Hq}, kv);
    const ag::Tensor Q = q.permute({1, 0, 2}), K = ag::index_select(k, 1, sel).permute({1, 0, 2}),
                     V = ag::index_select(v, 1, sel).permute({1, 0, 2});
    std::vector<double> m(static_cast<size_t>(T * T), 0.0);
    for (int64_t t = 0; t < T; ++t)
        for (int64_t j = t + 1; j < T; ++j) m[static_cast<size_t>(t * T + j)] = 1.0;
    const ag::Tensor scores = ag::matmul(Q, K.transpose(1, 2)) / std::sqrt(d_model);
    const ag::Tensor att =
        ag::softmax(ag::masked_fill(scores, ag::Tensor::from({T, T}, m), -std::numeric_limits<double>::infinity()));
    return ag::matmul(att, V).permute({1, 0, 2});
}

}  // namespace ex14
