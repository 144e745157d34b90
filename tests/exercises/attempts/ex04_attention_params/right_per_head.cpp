// Attempt (right): counts per head instead of per matrix: every query head brings its slice of W_q and of
// W_o (head_dim × d each), every KV head its slices of W_k and W_v.
#include "exercises/ex04_attention_params.h"

#include "exercises/not_implemented.h"

namespace ex04 {

int64_t attention_params(int64_t d, int64_t n_heads, int64_t n_kv_heads, int64_t head_dim) {
    const int64_t slice = head_dim * d;  // one head's rows of a projection
    int64_t total = 0;
    for (int64_t h = 0; h < n_heads; ++h) total += 2 * slice;     // W_q rows, W_o columns
    for (int64_t h = 0; h < n_kv_heads; ++h) total += 2 * slice;  // W_k rows, W_v rows
    return total;
}

}  // namespace ex04
