// Attempt (wrong): thinks the rolling buffer is one block of `window` slots for the whole batch, so with a
// window the batch's tokens together are clipped to the window instead of each sequence's.
#include "exercises/ex03_kv_cache.h"

#include "exercises/not_implemented.h"

namespace ex03 {

int64_t kv_bytes_per_token(int64_t layers, int64_t kv_heads, int64_t head_dim, int64_t bytes_per_value) {
    int64_t bytes = 0;
    for (int64_t layer = 0; layer < layers; ++layer) bytes += 2 * kv_heads * head_dim * bytes_per_value;
    return bytes;
}

int64_t kv_cache_bytes(int64_t batch, int64_t tokens, int64_t bytes_per_token, int64_t window) {
    int64_t positions = batch * tokens;
    if (window > 0 && positions > window) positions = window;  // the buffer is full: overwrite the oldest
    return positions * bytes_per_token;
}

}  // namespace ex03
