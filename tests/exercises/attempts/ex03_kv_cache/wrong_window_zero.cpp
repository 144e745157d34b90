// Attempt (wrong): always clips the sequence to the window, min(tokens, window), missing that window = 0 means
// "no rolling buffer": without a window the cache comes out empty.
#include "exercises/ex03_kv_cache.h"

#include <algorithm>

#include "exercises/not_implemented.h"

namespace ex03 {

int64_t kv_bytes_per_token(int64_t layers, int64_t kv_heads, int64_t head_dim, int64_t bytes_per_value) {
    return layers * (kv_heads * head_dim * bytes_per_value) * 2;
}

int64_t kv_cache_bytes(int64_t batch, int64_t tokens, int64_t bytes_per_token, int64_t window) {
    return batch * std::min(tokens, window) * bytes_per_token;
}

}  // namespace ex03
