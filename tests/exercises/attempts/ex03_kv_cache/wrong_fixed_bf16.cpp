// Attempt (wrong): every model in the exercise is BF16, so it writes the 2
// bytes per value in, ignoring bytes_per_value (an FP32 or FP8 cache comes out
// wrong).
#include "exercises/ex03_kv_cache.h"

#include <algorithm>

#include "exercises/not_implemented.h"

namespace ex03 {

int64_t kv_bytes_per_token(int64_t layers, int64_t kv_heads, int64_t head_dim, int64_t bytes_per_value) {
    (void)bytes_per_value;
    const int64_t bf16 = 2;
    return 2 * layers * kv_heads * head_dim * bf16;
}

int64_t kv_cache_bytes(int64_t batch, int64_t tokens, int64_t bytes_per_token, int64_t window) {
    const int64_t kept = window > 0 ? std::min(tokens, window) : tokens;
    return batch * kept * bytes_per_token;
}

}  // namespace ex03
