// Attempt (right): lists the four weight matrices as (rows, columns) pairs and
// sums rows × columns, with the widths of the query and KV sides named.
#include "exercises/ex04_attention_params.h"

#include "exercises/not_implemented.h"

namespace ex04 {

namespace {
struct Shape {
    int64_t rows, cols;
};
}  // namespace

int64_t attention_params(int64_t d, int64_t n_heads, int64_t n_kv_heads, int64_t head_dim) {
    const int64_t q_width = n_heads * head_dim, kv_width = n_kv_heads * head_dim;
    const Shape matrices[] = {{d, q_width}, {d, kv_width}, {d, kv_width}, {q_width, d}};
    int64_t total = 0;
    for (const Shape& m : matrices) total += m.rows * m.cols;
    return total;
}

}  // namespace ex04
