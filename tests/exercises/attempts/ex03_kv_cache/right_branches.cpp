// Attempt (right): spells the cache out as K bytes + V bytes per layer, and handles "no window", "shorter
// than the window" and "longer than the window" as three separate branches.
#include "exercises/ex03_kv_cache.h"

#include "exercises/not_implemented.h"

namespace ex03 {

int64_t kv_bytes_per_token(int64_t layers, int64_t kv_heads, int64_t head_dim, int64_t bytes_per_value) {
    const int64_t one_vector = kv_heads * head_dim * bytes_per_value;  // all KV heads of one layer
    const int64_t per_layer = one_vector /* K */ + one_vector /* V */;
    return per_layer * layers;
}

int64_t kv_cache_bytes(int64_t batch, int64_t tokens, int64_t bytes_per_token, int64_t window) {
    int64_t per_sequence = 0;
    if (window == 0)
        per_sequence = tokens * bytes_per_token;  // every token stays
    else if (tokens <= window)
        per_sequence = tokens * bytes_per_token;  // the buffer is not full yet
    else
        per_sequence = window * bytes_per_token;  // the oldest are overwritten
    return batch * per_sequence;
}

}  // namespace ex03
