// Attempt (wrong): counts the K and V vectors of one token once, as if the layers shared one cache, so the
// bytes per token miss the factor `layers` (Mistral would need 4 KiB per token).
#include "exercises/ex03_kv_cache.h"

#include <algorithm>

#include "exercises/not_implemented.h"

namespace ex03 {

int64_t kv_bytes_per_token(int64_t layers, int64_t kv_heads, int64_t head_dim, int64_t bytes_per_value) {
    (void)layers;  // the token's K and V are computed once
    const int64_t k_bytes = kv_heads * head_dim * bytes_per_value, v_bytes = k_bytes;
    return k_bytes + v_bytes;
}

int64_t kv_cache_bytes(int64_t batch, int64_t tokens, int64_t bytes_per_token, int64_t window) {
    const int64_t kept = window == 0 ? tokens : std::min(window, tokens);
    return kept * bytes_per_token * batch;
}

}  // namespace ex03
