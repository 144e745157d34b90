// Exercise 16 · a rolling-buffer KV cache for decoding with RoPE (lecture
// §6.4, §4.7)
//
// With a sliding window of W tokens (§6.1) the query at position p sees
// positions p-W+1 … p: itself and the W-1 before it. While decoding one
// token at a time, nothing older is ever needed again, so the cache can be
// a fixed buffer (Mistral's rolling buffer, §6.4). The lecture says it
// twice: "position i is written to slot i mod W, over the oldest", and
// "after each step the cache keeps only the last W - 1 positions". Both
// describe one buffer, seen between two steps and during one: between steps
// it holds the last W-1 positions, and the new token joins them to make the
// window of W (docs/models.md, "Decoding and caches"). Store it in either of
// two ways (S slots, position p in slot p mod S):
//   S = W-1, the project's (nn/attention.h KVCache::rolling, lesson 04):
//       attend to the filled slots and the new token's own key, THEN write
//       the new token over position p-(W-1), which this query still sees
//       and no later one does;
//   S = W, the slides' i mod W: slot p mod W holds position p-W, already
//       outside the window, so the new token may be written there first and
//       the query attends to the whole buffer (or attend first, skipping
//       p-W, then write).
//
// §4.7 RoPE makes this work: a key is rotated by ITS OWN absolute position
// once, when it is stored, and never touched again, so where it sits in the
// buffer does not matter. The new token's q and k must be rotated by its
// true absolute position p, not by the cache's length or the slot: once the
// buffer wraps around these are no longer p (lecture §6.4 and misconception
// 9; lesson 04 part 4 shows the 6.9e-4 error this causes).
//
// Complete the class RollingCache (ex16_rolling_cache.h) for one head:
//   RollingCache(W, head_dim, rope_base)  S empty slots (zeros, position -1)
//   slot_of(p)                            p mod S
//   step(q, k, v, p)                      rotate q and k by p (ag::rope with
//       pairing Half: reshape a [head_dim] vector to [1, 1, head_dim], one
//       time step of one head), attend to the positions p-W+1 … p (scores
//       q̃·k̃ / √head_dim, softmax, times the values), and store the rotated
//       key and the value in slot_of(p), record p, in the order your S
//       needs. Returns the output [head_dim]. Write the attention yourself
//       (matmul, softmax): ag::attention, which knows about windows and
//       empty slots, must not be called. q, k, v may arrive as views that
//       are not contiguous (narrows of one qkv projection): read their
//       numbers through contiguous(). Decoding needs no gradients: write
//       into keys.data() / values.data() under an ag::NoGradGuard.
//
// Graded: a new cache's slots (W-1 or W of them, empty) and its base;
// slot_of(p) = p mod S; decoding T = 40 tokens one by one with W = 2 … 6 and
// W = 64 (wider than the sequence) equals full windowed attention over the
// whole sequence (RoPE at positions 0 … T-1, then ag::causal_attention with
// the window); after each step the buffer is still [S, head_dim], keeps no
// graph, and holds the last W-1 positions, keys rotated by their absolute
// position, each in slot p mod S; the same when decoding starts at position
// 1000, with RoPE base 500000 or 10, with q, k, v given as non-contiguous
// views (q, k, v left unchanged), with scores of order 1000 (the softmax must
// not overflow, nor a row of scores all far below 0 underflow); each output
// unchanged by later steps (a tensor of its own, not a view of the buffer);
// ag::attention never run. Named when they explain the outputs for every W
// probed: rotating by the cache length, by the slot, not at all, with base
// 10000, with the Interleaved pairing, W+1 tokens seen (all of W slots and
// the new token) or W-1 (the oldest overwritten before the query saw it),
// and the new token's own key scored unrotated or twice; a key stored
// unrotated or rotated by its slot, a rotated value, a slot off by one, a
// slot count other than W-1 or W, and slot_of counting other slots than the
// buffer has are named too.
#include "exercises/ex16_rolling_cache.h"

#include "autograd/autograd.h"
#include "exercises/not_implemented.h"

namespace ex16 {

RollingCache::RollingCache(int64_t W, int64_t head_dim, double rope_base) {
    // TODO: window, base, S = W-1 or W empty slots
    (void)W, (void)head_dim, (void)rope_base;
    throw exercises::not_implemented("ex16 rolling_cache: RollingCache");
}

int64_t RollingCache::slot_of(int64_t position) const {
    // TODO
    (void)position;
    throw exercises::not_implemented("ex16 rolling_cache: slot_of");
}

ag::Tensor RollingCache::step(const ag::Tensor& q, const ag::Tensor& k, const ag::Tensor& v, int64_t position) {
    // TODO: rotate by the absolute position, attend, store
    (void)q, (void)k, (void)v, (void)position;
    throw exercises::not_implemented("ex16 rolling_cache: step");
}

}  // namespace ex16
