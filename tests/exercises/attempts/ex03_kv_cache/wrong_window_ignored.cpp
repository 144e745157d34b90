// Attempt (wrong): takes the sliding window for a mask only ("the query skips the old keys"), so the cache
// still keeps every token's K and V: the rolling buffer of §6.4, which overwrites what no query sees again,
// is not counted, and a long sequence's cache grows with its length.
// grade says: you ignored the window
#include "exercises/ex03_kv_cache.h"

#include "exercises/not_implemented.h"

namespace ex03 {

int64_t kv_bytes_per_token(int64_t layers, int64_t kv_heads, int64_t head_dim, int64_t bytes_per_value) {
    return 2 * layers * kv_heads * head_dim * bytes_per_value;
}

int64_t kv_cache_bytes(int64_t batch, int64_t tokens, int64_t bytes_per_token, int64_t window) {
    (void)window;  // the window hides old keys from the query; they are still stored
    return batch * tokens * bytes_per_token;
}

}  // namespace ex03
