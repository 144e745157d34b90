// Attempt (wrong): multiplies the sizes as int ("a cache size is a count of
// bytes, int is enough"), so the 4 GiB of a 32K-token sequence and the Llama-3
// batch overflow 32 bits.
#include "exercises/ex03_kv_cache.h"

#include <algorithm>

#include "exercises/not_implemented.h"

namespace ex03 {

int64_t kv_bytes_per_token(int64_t layers, int64_t kv_heads, int64_t head_dim, int64_t bytes_per_value) {
    const int n = 2 * static_cast<int>(layers) * static_cast<int>(kv_heads) * static_cast<int>(head_dim);
    return n * static_cast<int>(bytes_per_value);
}

int64_t kv_cache_bytes(int64_t batch, int64_t tokens, int64_t bytes_per_token, int64_t window) {
    const int kept = static_cast<int>(window > 0 ? std::min(tokens, window) : tokens);
    const int total = static_cast<int>(batch) * kept * static_cast<int>(bytes_per_token);
    return total;
}

}  // namespace ex03
