// Attempt (wrong): keeps a token's size in an int ("one token is a few hundred KiB at most"): right for
// every real model, but past 2^31 bytes (1024 layers of 1024 KV heads of 1024 numbers, BF16: 4 GiB) the
// int keeps only the low 32 bits of the product, here 0. The cache's own product is in int64_t.
// grade says: the size overflowed a 32-bit int
#include "exercises/ex03_kv_cache.h"

#include <algorithm>

#include "exercises/not_implemented.h"

namespace ex03 {

int64_t kv_bytes_per_token(int64_t layers, int64_t kv_heads, int64_t head_dim, int64_t bytes_per_value) {
    const int bytes = static_cast<int>(2 * layers * kv_heads * head_dim * bytes_per_value);
    return bytes;
}

int64_t kv_cache_bytes(int64_t batch, int64_t tokens, int64_t bytes_per_token, int64_t window) {
    const int64_t kept = window > 0 ? std::min(tokens, window) : tokens;
    return batch * kept * bytes_per_token;
}

}  // namespace ex03
