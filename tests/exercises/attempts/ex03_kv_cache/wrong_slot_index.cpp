// Attempt (wrong): mixes up the slot a position is written to (i mod W, §6.4)
// with how many positions the buffer holds, keeping tokens mod window of a long
// sequence (none at exactly 4096 tokens).
#include "exercises/ex03_kv_cache.h"

#include <algorithm>

#include "exercises/not_implemented.h"

namespace ex03 {
int64_t kv_bytes_per_token(int64_t layers, int64_t kv_heads, int64_t head_dim, int64_t bytes_per_value) {
    return 2 * layers * kv_heads * head_dim * bytes_per_value;
}

int64_t kv_cache_bytes(int64_t batch, int64_t tokens, int64_t bytes_per_token, int64_t window) {
    const int64_t kept = window > 0 && tokens > window ? tokens % window : tokens;
    return batch * kept * bytes_per_token;
}

}  // namespace ex03
