// Exercise 5 · what a sliding window saves (lecture §6.2; §10 exercise 5)
//
// A sequence of T tokens has T² query-key pairs. Causal attention uses the
// pairs j ≤ t; a window of W uses only t - W < j ≤ t (each query sees at
// most W keys, itself included; the first W - 1 queries see fewer); the
// sliding-chunks implementation computes 2TW scores and masks the rest.
// For T = 32,768 and W = 4096, what share of T² is each?
//
// Write window_fractions() (ex05_window_fractions.h). Count exactly, in
// integers, then divide by T².
//
// W may be larger than T: then the window holds every causal pair (query
// t sees its t + 1 keys). chunked is 2TW / T² as the header defines it
// (graded for W <= T).
//
// Graded: ≈ 50%, ≈ 11.7% and 25% for the lecture's T and W; exact counts
// against the masks for every T ≤ 24 and W ≤ T + 4 (windows longer than
// the sequence too); W = 1 (1/T), W = T (the causal share), T = W = 1; the
// exact counts on random T up to 2^20. A known wrong turn (exactly half
// for causal, the diagonal left out, every query seeing W keys, a window
// of W - 1 or W + 1 or W/2 + 1, a two-sided window, the query left out of
// its window, W > T not clipped or clipped to T - 1, shares of the causal
// pairs instead of T², percentages, TW or 2TW - W² chunk scores, integer
// division, 32-bit counts) is named in the message.
#include "exercises/ex05_window_fractions.h"

#include "exercises/not_implemented.h"

namespace ex05 {

Fractions window_fractions(int64_t T, int64_t W) {
    // TODO
    (void)T, (void)W;
    throw exercises::not_implemented("ex05 window_fractions");
}

}  // namespace ex05
