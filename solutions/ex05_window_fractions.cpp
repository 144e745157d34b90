// Exercise 5 · what a sliding window saves: reference solution (§6.2).
#include "exercises/ex05_window_fractions.h"

#include <algorithm>

namespace ex05 {

Fractions window_fractions(int64_t T, int64_t W) {
    const double all = static_cast<double>(T) * static_cast<double>(T);
    // Query t sees t + 1 keys causally, min(t + 1, W) through the window:
    // Σ = T(T+1)/2 and TW - W(W-1)/2 (for W ≤ T).
    const int64_t w = std::min(W, T);
    const double causal = static_cast<double>(T) * static_cast<double>(T + 1) / 2;
    const double window =
        static_cast<double>(T) * static_cast<double>(w) - static_cast<double>(w) * static_cast<double>(w - 1) / 2;
    return {causal / all, window / all, 2.0 * static_cast<double>(T) * static_cast<double>(W) / all};
}

}  // namespace ex05
