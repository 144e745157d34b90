#pragma once
// Exercise 5 · what a sliding window saves (lecture §6.2, exercise 5). The
// statement is in ex05_window_fractions.cpp.
#include <cstdint>

namespace ex05 {

// Shares of the T² entries of a full score matrix.
struct Fractions {
    double causal = 0;   // the scores causal attention uses (j ≤ t)
    double window = 0;   // the scores sliding-window attention uses (t - W < j ≤ t)
    double chunked = 0;  // the scores the sliding-chunks implementation computes: 2TW
};

Fractions window_fractions(int64_t T, int64_t W);

}  // namespace ex05
