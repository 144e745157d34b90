// Exercise 15 · sliding-window attention: the mask and the sliding chunks
// (lecture §6.1, §6.2)
//
// §6.1 With a window of W tokens, query t sees key j iff t - W < j <= t: the
// W most recent positions, t itself included (Mistral's W; the slides' w is
// Longformer's two-sided width, W = w/2 + 1).
//   (a) Write window_mask(T, W): the [T, T] tensor of 0 and 1 of that rule.
//
// §6.2 The naive implementation computes all T² scores and masks most of
// them away. The sliding chunks compute only what a window can need: cut
// the T queries into chunks of W positions; a query of chunk b (positions
// bW … bW+W-1) can only see keys of chunk b-1 and chunk b, so each chunk
// needs one score block of (≤ W) × (≤ 2W), masked with the window rule
// (some keys of chunk b-1 are still too far back, later keys of chunk b are
// in the future). Total O(T·W) instead of O(T²).
//   (b) Write chunked_attention(q, k, v, W) for one head, q, k, v [T, d]:
//       scores q kᵀ / √d per chunk, -inf where not visible, softmax, times v.
//       T need not be a multiple of W (the last chunk is shorter). Use
//       engine ops (narrow, matmul, masked_fill, softmax, cat) so that
//       gradients flow; a loop over the chunks is fine (batching them into
//       one product, as lesson 04 does, is faster but not required). A loop
//       over the queries, one at a time, is not: that is §6.2's for-loop
//       version, the same O(T·W) scores as T small products (too slow in
//       practice); the chunks compute them as regular matrix products.
//
// Signatures in ex15_sliding_window.h:
//   ag::Tensor window_mask(int64_t T, int64_t window);
//   ag::Tensor chunked_attention(const ag::Tensor& q, const ag::Tensor& k,
//                                const ag::Tensor& v, int64_t window);
//
// Graded: the mask against the rule for T = 1 … 24 and W = 1 to wider than
// T; the chunked attention against the naive masked attention (all T² scores
// + mask + softmax) and ag::causal_attention with the window, for T = 1 … 50
// (multiples of W or not) and W = 1, 2, … up to W > T; with scores of order
// 1000 (a softmax that does not subtract the row's max overflows); with q,
// k, v given as non-contiguous views; q, k, v left unchanged; its gradients
// (a gradient check, and equal to the engine's); its graph keeping O(T·W)
// numbers (4 times T keeps about 4 times as much; views of a T×T tensor
// count in full) and needing O(T·W) memory at once (temporary tensors too,
// e.g. a [T, T] mask sliced per chunk); its matrix products doing no more
// than one W × 2W score block per chunk (counted from their FLOPs: a chunk
// that also scores chunk b+1, or chunks of 2W queries, do more); chunks of
// queries, not one query at a time (at T = 128, W = 32: at most 4 products a
// chunk and fewer ops than queries); the engine's fused attention never run (not even under NoGradGuard or in the
// backward). A wrong output is named when it matches a usual wrong turn at
// every size probed: a window of W+1, W-1 or the slides' w/2+1 tokens, one
// without t itself, mask transposed or two-sided, the previous chunk
// forgotten, query and key swapped in a chunk, no or a 1/d scale, hidden
// scores set to 0 or their weights zeroed after the softmax, no window.
#include "exercises/ex15_sliding_window.h"

#include "autograd/ops.h"
#include "exercises/not_implemented.h"

namespace ex15 {

ag::Tensor window_mask(int64_t T, int64_t window) {
    // TODO: 1 where t - W < j <= t, else 0
    (void)T, (void)window;
    throw exercises::not_implemented("ex15 sliding_window: window_mask");
}

ag::Tensor chunked_attention(const ag::Tensor& q, const ag::Tensor& k, const ag::Tensor& v, int64_t window) {
    // TODO: for each chunk of W queries, the scores against the keys of the
    // previous and the same chunk, masked, softmax, times the values
    (void)q, (void)k, (void)v, (void)window;
    throw exercises::not_implemented("ex15 sliding_window: chunked_attention");
}

}  // namespace ex15
