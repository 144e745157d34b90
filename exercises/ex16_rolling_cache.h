#pragma once
// Exercise 16 · a rolling-buffer KV cache for decoding with RoPE (lecture
// §6.4, §4.7). The statement is in ex16_rolling_cache.cpp.
#include <cstdint>
#include <vector>

#include "autograd/tensor.h"

namespace ex16 {

// One attention head's rolling buffer for a sliding window of W tokens
// (§6.4). A query at position p sees p itself and the W-1 positions before
// it. The lecture puts it in two sentences, one buffer seen between two
// steps and during one: between steps the cache keeps only the last W-1
// positions; the new token joins them, written to slot p mod W, to make the
// window of W (docs/models.md, "Decoding and caches"). The buffer has S
// slots, position p in slot p mod S, either convention accepted:
//   S = W-1 (the project's, nn/attention.h KVCache::rolling): the new
//       token's key is held aside while its query attends, then written
//       over position p-(W-1), which no later query sees;
//   S = W (the slides' "slot i mod W"): slot p mod W holds position p-W,
//       already outside the window, so the new token may be written there
//       first and its query attends to the whole buffer.
class RollingCache {
public:
    // A cache for a window of W >= 2 tokens and heads of head_dim (even)
    // numbers, RoPE with `rope_base` (pairing Half, ag::rope's default):
    // S empty slots (S = W-1 or W), i.e. keys and values all 0 and every
    // position -1.
    RollingCache(int64_t W, int64_t head_dim, double rope_base = 10000.0);

    // The slot position p is stored in: p mod S.
    int64_t slot_of(int64_t position) const;

    // Decodes the token at absolute position p. Tokens come one at a time,
    // p = p0, p0+1, p0+2, … (p0 = 0 for a whole sequence). q, k, v [head_dim]
    // are its query, key and value before RoPE. step():
    //   1. rotates q and k by the absolute position p (ag::rope, base
    //      rope_base, pairing Half);
    //   2. attends: out = Σ_j softmax_j(q̃·k̃_j / √head_dim) v_j over the keys
    //      at positions p-W+1 … p that were decoded: the cached ones and
    //      the new token's own (empty slots, and anything older than
    //      p-W+1, are never seen);
    //   3. stores the rotated key and the value in slot slot_of(p) and
    //      records p there: after the attention with S = W-1 (the slot
    //      still holds p-(W-1), which this query sees), before or after it
    //      with S = W.
    // Returns out [head_dim].
    ag::Tensor step(const ag::Tensor& q, const ag::Tensor& k, const ag::Tensor& v, int64_t position);

    int64_t window = 0;              // W
    double base = 10000.0;           // RoPE base
    ag::Tensor keys, values;         // [S, head_dim]: slot s's key (rotated by its position) and value
    std::vector<int64_t> positions;  // [S]: the absolute position in slot s, -1 while empty
};

}  // namespace ex16
