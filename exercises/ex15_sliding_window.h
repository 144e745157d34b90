#pragma once
// Exercise 15 · sliding-window attention: the mask and the sliding chunks
// (lecture §6.1, §6.2). The statement is in ex15_sliding_window.cpp.
#include <cstdint>

#include "autograd/tensor.h"

namespace ex15 {

// §6.1 The window mask of T positions and a window of W >= 1 tokens:
// a [T, T] tensor of 0 and 1 with entry (t, j) = 1 iff
//     t - W < j <= t
// (query t sees the W most recent tokens, itself on the diagonal included).
ag::Tensor window_mask(int64_t T, int64_t window);

// §6.2 Sliding-chunks attention for one head. q, k, v are [T, d] (row t is
// position t); W >= 1 (W may exceed T). Returns [T, d]:
//     out_t = Σ_j p_tj v_j,   p_t = softmax over the visible j of q_t·k_j / √d,
// the visible j being those of window_mask. The queries are cut into chunks
// of W positions (chunk b: positions bW … bW+W-1, the last chunk shorter
// when W does not divide T); chunk b scores only the keys of chunks b-1 and
// b (at most 2W of them) and masks them, so no [T, T] tensor is ever made:
// O(T·W) time and memory. Build it from engine ops (ops.h: narrow, matmul,
// masked_fill, softmax, cat, …) so that gradients flow back to q, k and v;
// do not call ag::attention / ag::causal_attention.
ag::Tensor chunked_attention(const ag::Tensor& q, const ag::Tensor& k, const ag::Tensor& v, int64_t window);

}  // namespace ex15
