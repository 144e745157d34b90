// Attempt (right): adds the cache up sequence by sequence and layer-free per
// value: each sequence keeps its own tokens until its buffer is full, then
// exactly `window` of them; bytes per token as K values + V values.
#include "exercises/ex03_kv_cache.h"

#include <algorithm>

#include "exercises/not_implemented.h"

namespace ex03 {

int64_t kv_bytes_per_token(int64_t layers, int64_t kv_heads, int64_t head_dim, int64_t bytes_per_value) {
    const int64_t values_per_layer = kv_heads * head_dim;  // one K (and one V) vector per KV head
    const int64_t k_bytes = layers * values_per_layer * bytes_per_value;
    const int64_t v_bytes = k_bytes;
    return k_bytes + v_bytes;
}

int64_t kv_cache_bytes(int64_t batch, int64_t tokens, int64_t bytes_per_token, int64_t window) {
    int64_t total = 0;
    for (int64_t s = 0; s < batch; ++s) {
        int64_t kept = tokens;
        if (window != 0 && kept > window) kept = window;
        total += kept * bytes_per_token;
    }
    return total;
}

}  // namespace ex03
