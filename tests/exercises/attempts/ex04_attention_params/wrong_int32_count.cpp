// Attempt (wrong): counts the weights in int ("a layer has a few million
// weights"), so a wide layer (d = 32,768 and more) overflows 32 bits.
#include "exercises/ex04_attention_params.h"

#include "exercises/not_implemented.h"

namespace ex04 {

int64_t attention_params(int64_t d, int64_t n_heads, int64_t n_kv_heads, int64_t head_dim) {
    const int q = static_cast<int>(d) * static_cast<int>(n_heads) * static_cast<int>(head_dim);
    const int kv = static_cast<int>(d) * static_cast<int>(n_kv_heads) * static_cast<int>(head_dim);
    const int total = 2 * q + 2 * kv;
    return total;
}

}  // namespace ex04
