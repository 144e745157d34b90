// Exercise 14 · causal grouped-query attention from engine ops (lecture
// §5.2; lesson 03 part 1)
//
// In GQA the Hq query heads share Hkv < Hq key/value heads: consecutive
// groups of g = Hq / Hkv query heads read the same K/V head, so query head
// h reads K/V head floor(h / g). Hkv = Hq is ordinary multi-head attention
// (MHA), Hkv = 1 multi-query attention (MQA). Per query head h:
//     out[t, h] = Σ_{j ≤ t} softmax_j( q[t, h] · k[j, kv(h)] / sqrt(dh) ) v[j, kv(h)].
//
// Write kv_head() and gqa_attention() (ex14_gqa_attention.h) from engine
// ops (autograd/ops.h), so that the engine differentiates it: for example
// index_select the K/V head of every query head (or reshape q into its
// groups), permute heads to the front, matmul, masked_fill the future
// (j > t) with -infinity, softmax, matmul with v, permute back. Do not
// call ag::attention or ag::causal_attention: they are what you are
// graded against.
//
// Graded: kv_head() for many (Hq, Hkv); the output equals the reference and
// ag::causal_attention; equals MHA on K/V heads copied g times; MHA
// (g = 1) and MQA (Hkv = 1) against attention written out head by head;
// the edges T = 1, one head, one KV head, dh = 1 and Hkv ≠ g; q, k, v that
// are non-contiguous views; the first row sees itself only and no row
// sees a later token; large scores (hundreds: the softmax must subtract
// the max of the visible scores); ag::attention / ag::causal_attention
// never run (forward or backward, NoGradGuard or not); gradients reach q, k
// and v and pass the gradient check. Diagnosed: heads grouped the wrong way
// (h % Hkv, h / Hkv), a missing causal mask, one off by one, one that hides
// a query's own key or the wrong triangle, the future's scores set to 0
// instead of -infinity, a missing 1/sqrt(dh), 1/dh or 1/sqrt(Hq·dh),
// weights that do not sum to 1 over the visible keys, heads and tokens
// mixed up by a reshape, exp overflowing or underflowing.
#include "exercises/ex14_gqa_attention.h"

#include "exercises/not_implemented.h"

namespace ex14 {

int64_t kv_head(int64_t h, int64_t q_heads, int64_t kv_heads) {
    // TODO
    (void)h, (void)q_heads, (void)kv_heads;
    throw exercises::not_implemented("ex14 gqa_attention: kv_head");
}

ag::Tensor gqa_attention(const ag::Tensor& q, const ag::Tensor& k, const ag::Tensor& v) {
    // TODO
    (void)q, (void)k, (void)v;
    throw exercises::not_implemented("ex14 gqa_attention: gqa_attention");
}

}  // namespace ex14
