// Attempt (wrong): reads "query heads share keys and values" as one shared K/V projection, counting a single
// n_kv_heads·head_dim × d matrix for both K and V.
#include "exercises/ex04_attention_params.h"

#include "exercises/not_implemented.h"

namespace ex04 {

int64_t attention_params(int64_t d, int64_t n_heads, int64_t n_kv_heads, int64_t head_dim) {
    int64_t total = 0;
    total += n_heads * head_dim * d;     // W_q
    total += n_kv_heads * head_dim * d;  // the shared K/V heads
    total += d * n_heads * head_dim;     // W_o
    return total;
}

}  // namespace ex04
