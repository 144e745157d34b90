#pragma once
// Exercise 16 · a rolling-buffer KV cache for decoding with RoPE (lecture
// §6.4, §4.7). The statement is in ex16_rolling_cache.cpp.
#include <cstdint>
#include <vector>

#include "autograd/tensor.h"

namespace ex16 {

// One attention head's rolling buffer for a sliding window of W tokens
// (the project's convention, nn/attention.h KVCache::rolling): a query at
// position p sees p itself and the W-1 positions before it, so the buffer
// keeps W-1 slots and position p lives in slot p mod (W-1), overwriting
// position p - (W-1), which no later query can see.
class RollingCache {
public:
    // A cache for a window of W >= 2 tokens and heads of head_dim (even)
    // numbers, RoPE with `rope_base` (pairing Half, ag::rope's default):
    // W-1 empty slots, i.e. keys and values all 0 and every position -1.
    RollingCache(int64_t W, int64_t head_dim, double rope_base = 10000.0);

    // The slot position p is stored in: p mod (W-1).
    int64_t slot_of(int64_t position) const;

    // Decodes the token at absolute position p. Tokens come one at a time,
    // p = p0, p0+1, p0+2, … (p0 = 0 for a whole sequence). q, k, v [head_dim]
    // are its query, key and value before RoPE. step():
    //   1. rotates q and k by the absolute position p (ag::rope, base
    //      rope_base, pairing Half);
    //   2. attends: out = Σ_j softmax_j(q̃·k̃_j / √head_dim) v_j over the keys
    //      at positions p-W+1 … p that were decoded: the cached ones and
    //      the new token's own (empty slots are never seen);
    //   3. stores the rotated key and the value in slot slot_of(p) and
    //      records p there.
    // Returns out [head_dim].
    ag::Tensor step(const ag::Tensor& q, const ag::Tensor& k, const ag::Tensor& v, int64_t position);

    int64_t window = 0;              // W
    double base = 10000.0;           // RoPE base
    ag::Tensor keys, values;         // [W-1, head_dim]: slot s's key (rotated by its position) and value
    std::vector<int64_t> positions;  // [W-1]: the absolute position in slot s, -1 while empty
};

}  // namespace ex16
