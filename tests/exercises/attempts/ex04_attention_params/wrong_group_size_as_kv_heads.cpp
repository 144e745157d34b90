// Attempt (wrong): mixes up the group size g = n_heads / n_kv_heads (query
// heads per KV head) with the number of KV heads, sizing W_k and W_v by g
// heads.
#include "exercises/ex04_attention_params.h"

#include "exercises/not_implemented.h"

namespace ex04 {

int64_t attention_params(int64_t d, int64_t n_heads, int64_t n_kv_heads, int64_t head_dim) {
    const int64_t g = n_heads / n_kv_heads;
    return 2 * d * n_heads * head_dim + 2 * d * g * head_dim;
}

}  // namespace ex04
