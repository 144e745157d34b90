#pragma once
// Exercise 3 · the KV cache's size (lecture §5.1, §5.3, §6.4, exercise 3).
// The statement is in ex03_kv_cache.cpp.
#include <cstdint>

namespace ex03 {

// Bytes of K and V one token leaves in the cache, over all layers.
int64_t kv_bytes_per_token(int64_t layers, int64_t kv_heads, int64_t head_dim, int64_t bytes_per_value);

// Bytes of the cache for `batch` sequences of `tokens` tokens each. With a
// rolling buffer of `window` positions (window > 0) a sequence keeps at
// most `window` of them at once (the last window - 1 and the new token's,
// §6.4); window = 0 keeps every token.
int64_t kv_cache_bytes(int64_t batch, int64_t tokens, int64_t bytes_per_token, int64_t window);

}  // namespace ex03
