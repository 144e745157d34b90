// Attempt (wrong): counts K and V in both functions: bytes_per_token already
// holds both, and the cache multiplies by 2 again "for K and V", doubling every
// cache.
#include "exercises/ex03_kv_cache.h"

#include <algorithm>

#include "exercises/not_implemented.h"

namespace ex03 {
int64_t kv_bytes_per_token(int64_t layers, int64_t kv_heads, int64_t head_dim, int64_t bytes_per_value) {
    return 2 * layers * kv_heads * head_dim * bytes_per_value;
}

int64_t kv_cache_bytes(int64_t batch, int64_t tokens, int64_t bytes_per_token, int64_t window) {
    const int64_t kept = window > 0 ? std::min(tokens, window) : tokens;
    return 2 * batch * kept * bytes_per_token;  // K and V
}

}  // namespace ex03
