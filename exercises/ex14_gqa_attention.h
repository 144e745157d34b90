#pragma once
// Exercise 14 · causal grouped-query attention from engine ops (lecture
// §5.2). The statement is in ex14_gqa_attention.cpp.
#include <cstdint>

#include "autograd/autograd.h"

namespace ex14 {

// The KV head that query head h reads when `q_heads` query heads share
// `kv_heads` KV heads (q_heads a multiple of kv_heads): floor(h / g),
// g = q_heads / kv_heads, so heads 0 … g-1 read KV head 0, and so on.
int64_t kv_head(int64_t h, int64_t q_heads, int64_t kv_heads);

// Causal GQA for one sequence: q [T, Hq, dh]; k, v [T, Hkv, dh], Hq a
// multiple of Hkv. Query head h reads K/V head kv_head(h, Hq, Hkv); query t
// sees keys j ≤ t; scores q·k / sqrt(dh), softmax over the visible keys.
// Returns [T, Hq, dh], built from engine ops (gradients reach q, k and v).
ag::Tensor gqa_attention(const ag::Tensor& q, const ag::Tensor& k, const ag::Tensor& v);

}  // namespace ex14
