// Attempt (wrong): takes §5.2's "GQA = MHA with each K/V head copied g
// times" literally: copies the K/V heads with engine ops, then hands the MHA
// to ag::causal_attention; the exercise is to build the attention itself.
#include "exercises/ex14_gqa_attention.h"

#include <vector>

#include "exercises/not_implemented.h"

namespace ex14 {

int64_t kv_head(int64_t h, int64_t q_heads, int64_t kv_heads) { return h / (q_heads / kv_heads); }

ag::Tensor gqa_attention(const ag::Tensor& q, const ag::Tensor& k, const ag::Tensor& v) {
    const int64_t T = q.size(0), Hq = q.size(1), dh = q.size(2), Hkv = k.size(1);
    std::vector<ag::Tensor> ks, vs;
    for (int64_t h = 0; h < Hq; ++h) {
        ks.push_back(k.narrow(1, kv_head(h, Hq, Hkv), 1));
        vs.push_back(v.narrow(1, kv_head(h, Hq, Hkv), 1));
    }
    const ag::Tensor k_mha = ag::cat(ks, 1).reshape({1, T, Hq, dh});
    const ag::Tensor v_mha = ag::cat(vs, 1).reshape({1, T, Hq, dh});
    return ag::causal_attention(q.reshape({1, T, Hq, dh}), k_mha, v_mha).reshape({T, Hq, dh});
}

}  // namespace ex14
