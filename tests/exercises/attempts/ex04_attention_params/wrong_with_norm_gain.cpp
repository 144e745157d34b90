// Attempt (wrong): counts the pre-norm RMSNorm of the attention block (§3.1) as
// part of the layer, adding its d gains, although the exercise asks for W_q,
// W_k, W_v and W_o only.
#include "exercises/ex04_attention_params.h"

#include "exercises/not_implemented.h"

namespace ex04 {

int64_t attention_params(int64_t d, int64_t n_heads, int64_t n_kv_heads, int64_t head_dim) {
    const int64_t projections = 2 * d * n_heads * head_dim + 2 * d * n_kv_heads * head_dim;
    const int64_t norm_gain = d;
    return projections + norm_gain;
}

}  // namespace ex04
