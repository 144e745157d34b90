// Exercise 4 · GQA's parameters (lecture §5.2; §10 exercise 4)
//
// An attention layer projects x (d numbers) to n_heads query heads and
// n_kv_heads key and value heads of head_dim numbers each, and projects the
// concatenated heads back to d. No biases.
//   d = 4096, 32 query heads of 128: how many weights with MHA (32 KV
//   heads)? With GQA (8 KV heads)? What share is saved, and why does it
//   hardly matter for the whole model (§5.1: what GQA saves is the cache)?
//
// Write attention_params() (ex04_attention_params.h).
//
// n_kv_heads divides n_heads. n_heads·head_dim need not equal d (16 heads
// of 256 on d = 3072 are 4096 wide).
//
// Graded: 67,108,864 (MHA) and 41,943,040 (GQA) at d = 4096; 4096 (MHA)
// and 2304 (MQA) for d = 32 with 8 heads of 4; one head, MQA and MHA at
// several sizes; heads wider and narrower than d; the reference on random
// shapes; the parameter counts of real nn::Attention modules (1 to 8 query
// heads, every KV head count that divides them); a layer of more than 2^31
// weights (d = 32768). A known wrong turn (K and V with every query head,
// W_o missing or sized by the KV heads, W_q sized by the KV heads, W_v
// missing, K and V as one matrix, W_k and W_v sized by the group size,
// W_q and W_o as d × d, heads of d / n_heads, biases or other extra
// weights, 32-bit overflow) is named in the message.
#include "exercises/ex04_attention_params.h"

#include "exercises/not_implemented.h"

namespace ex04 {

int64_t attention_params(int64_t d, int64_t n_heads, int64_t n_kv_heads, int64_t head_dim) {
    // TODO
    (void)d, (void)n_heads, (void)n_kv_heads, (void)head_dim;
    throw exercises::not_implemented("ex04 attention_params");
}

}  // namespace ex04
