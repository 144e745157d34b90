// Exercise 3 · the KV cache's size: reference solution (lecture §5.3, §6.4).
#include "exercises/ex03_kv_cache.h"

#include <algorithm>

namespace ex03 {

// K and V (2) for every layer and KV head: 2 · L · H_kv · d_h numbers.
int64_t kv_bytes_per_token(int64_t layers, int64_t kv_heads, int64_t head_dim, int64_t bytes_per_value) {
    return 2 * layers * kv_heads * head_dim * bytes_per_value;
}

int64_t kv_cache_bytes(int64_t batch, int64_t tokens, int64_t bytes_per_token, int64_t window) {
    const int64_t kept = window > 0 ? std::min(tokens, window) : tokens;
    return batch * kept * bytes_per_token;
}

}  // namespace ex03
