// Attempt (wrong): thinks the output projection reads the value heads, so with GQA W_o shrinks with them to
// d × (n_kv_heads·head_dim); but W_o reads one attention output per query head.
#include "exercises/ex04_attention_params.h"

#include "exercises/not_implemented.h"

namespace ex04 {

int64_t attention_params(int64_t d, int64_t n_heads, int64_t n_kv_heads, int64_t head_dim) {
    const int64_t query_width = n_heads * head_dim, kv_width = n_kv_heads * head_dim;
    const int64_t projections_in = d * query_width + 2 * d * kv_width;  // W_q, W_k, W_v
    const int64_t projection_out = kv_width * d;                        // back from the values to d
    return projections_in + projection_out;
}

}  // namespace ex04
