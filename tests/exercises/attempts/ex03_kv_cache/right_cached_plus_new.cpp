// Attempt (right): counts §6.4's rolling buffer as lesson 04 does: the last W - 1 positions kept
// between steps, plus the new token's K and V: min(tokens - 1, W - 1) + 1 positions of a sequence at once,
// which is min(tokens, W) for any sequence of at least one token.
#include "exercises/ex03_kv_cache.h"

#include <algorithm>

#include "exercises/not_implemented.h"

namespace ex03 {

int64_t kv_bytes_per_token(int64_t layers, int64_t kv_heads, int64_t head_dim, int64_t bytes_per_value) {
    const int64_t k = layers * kv_heads * head_dim * bytes_per_value;  // every layer's K of one token
    return k + k;                                                      // and its V
}

int64_t kv_cache_bytes(int64_t batch, int64_t tokens, int64_t bytes_per_token, int64_t window) {
    if (window == 0) return batch * tokens * bytes_per_token;
    const int64_t between_steps = std::min(tokens - 1, window - 1);  // the buffer before the new token
    return batch * (between_steps + 1) * bytes_per_token;
}

}  // namespace ex03
