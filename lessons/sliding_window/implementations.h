#pragma once
// §6.1-6.2 sliding-window attention, the mask and the slides' three ways to
// compute it, on one head: q, k, v [T, d], query t at position t. Each
// returns [T, d], softmax(q kᵀ/√d over the visible keys) v, equal to
// ag::causal_attention with the same window (lesson 04 part 2 checks it).
#include <cstdint>
#include <vector>

#include "autograd/tensor.h"

namespace lessons::sliding_window {

// §6.1 the mask rule (the engine's, docs/models.md): query t sees key j iff
//   t - W < j <= t,
// the W most recent tokens with t itself on the diagonal. The slides' w is
// Longformer's two-sided width: a causal window of w/2 + 1 tokens, W.
bool visible(int64_t t, int64_t j, int64_t window);

// §6.1 the mask the engine applies for the slides' two-sided width w, a
// causal window of W = w/2 + 1 tokens: which keys ag::causal_attention with
// window W gives a nonzero weight, on random q and k for T queries (softmax
// gives every visible key a positive weight and every hidden one exactly 0).
struct EngineMask {
    int64_t slides_w = 0;                   // w
    int64_t window = 0;                     // W = w/2 + 1
    std::vector<std::vector<double>> mask;  // [t][j]: 1 where query t gives key j a weight, else 0
    std::vector<int64_t> visible_keys;      // per query t: the keys it sees (its row's sum)
    int64_t most_visible = 0;               // the most keys any query sees
    int64_t mismatches = 0;                 // cells that break the rule visible(t, j, W)
};
EngineMask engine_mask(int64_t slides_w, int64_t T);

// §6.2 (1) naive: the full T×T score matrix, then the mask (-inf where not
// visible), softmax and v. O(T²) time and memory, whatever W is.
ag::Tensor naive_window_attention(const ag::Tensor& q, const ag::Tensor& k, const ag::Tensor& v, int64_t window);

// §6.2 (2) for loop: each query t scores only keys max(0, t-W+1) … t. O(T·W)
// work, but T small operations (one per query), like a Python loop.
ag::Tensor loop_window_attention(const ag::Tensor& q, const ag::Tensor& k, const ag::Tensor& v, int64_t window);

// §6.2 (3) sliding chunks (Longformer): cut the sequence into chunks of W
// positions (the last padded); the queries of chunk b can only see keys of
// chunks b-1 and b, so each chunk needs one W×2W score block, and all the
// blocks are one batched matrix product. O(T·W) time and memory.
ag::Tensor chunked_window_attention(const ag::Tensor& q, const ag::Tensor& k, const ag::Tensor& v, int64_t window);

// §6.2 the query-key scores each of the three computes for T queries, from
// its shapes: what its arithmetic grows with.
//   naive: all T² of them, the hidden ones too;
//   for loop: only the visible ones, Σ_t min(t + 1, W), which is
//     T·W - W(W-1)/2 once T ≥ W;
//   sliding chunks: one W×2W block per chunk of W queries, ⌈T/W⌉·2W² (the
//     padded last chunk and the never-visible chunk -1 included).
int64_t naive_scores(int64_t T, int64_t window);
int64_t loop_scores(int64_t T, int64_t window);
int64_t chunked_scores(int64_t T, int64_t window);

}  // namespace lessons::sliding_window
