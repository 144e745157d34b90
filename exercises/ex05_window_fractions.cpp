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
// Graded: ≈ 50%, ≈ 11.7% and 25% for the lecture's T and W; exact counts
// against masks for small T and W; the reference on random T, W.
#include "exercises/ex05_window_fractions.h"

#include "exercises/not_implemented.h"

namespace ex05 {

Fractions window_fractions(int64_t T, int64_t W) {
    // TODO
    (void)T, (void)W;
    throw exercises::not_implemented("ex05 window_fractions");
}

}  // namespace ex05
