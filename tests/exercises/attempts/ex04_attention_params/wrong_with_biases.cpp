// Attempt (wrong): counts every nn.Linear with its bias vector, as in the lecture-2 GPT, although the
// statement (and the modern recipe of §3.2) has no biases.
#include "exercises/ex04_attention_params.h"

#include "exercises/not_implemented.h"

namespace ex04 {

namespace {
int64_t linear(int64_t in, int64_t out) { return in * out + out; }  // weight and bias
}  // namespace

int64_t attention_params(int64_t d, int64_t n_heads, int64_t n_kv_heads, int64_t head_dim) {
    const int64_t q = n_heads * head_dim, kv = n_kv_heads * head_dim;
    return linear(d, q) + linear(d, kv) + linear(d, kv) + linear(q, d);
}

}  // namespace ex04
