// Exercise 4 · GQA's parameters: reference solution (lecture §5.2).
#include "exercises/ex04_attention_params.h"

namespace ex04 {

// W_q [H·d_h, d], W_k and W_v [H_kv·d_h, d] each, W_o [d, H·d_h].
int64_t attention_params(int64_t d, int64_t n_heads, int64_t n_kv_heads, int64_t head_dim) {
    const int64_t q = n_heads * head_dim, kv = n_kv_heads * head_dim;
    return d * q + 2 * d * kv + q * d;
}

}  // namespace ex04
