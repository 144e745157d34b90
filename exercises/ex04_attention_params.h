#pragma once
// Exercise 4 · GQA's parameters (lecture §5.2, exercise 4). The statement is
// in ex04_attention_params.cpp.
#include <cstdint>

namespace ex04 {

// Weights of one attention layer without biases: W_q, W_k, W_v, W_o, for
// model width d, n_heads query heads and n_kv_heads KV heads of head_dim.
int64_t attention_params(int64_t d, int64_t n_heads, int64_t n_kv_heads, int64_t head_dim);

}  // namespace ex04
