// Attempt (wrong): knows the first queries see fewer keys, but subtracts a full
// triangle of W(W+1)/2 (the first W queries missing 1 … W keys) instead of
// W(W-1)/2.
#include "exercises/ex05_window_fractions.h"

#include <algorithm>

#include "exercises/not_implemented.h"

namespace ex05 {

Fractions window_fractions(int64_t T, int64_t W) {
    const int64_t w = std::min(W, T);
    const double all = static_cast<double>(T) * static_cast<double>(T);
    Fractions f;
    f.causal = static_cast<double>(T * (T + 1) / 2) / all;
    f.window = static_cast<double>(T * w - w * (w + 1) / 2) / all;
    f.chunked = static_cast<double>(2 * T * W) / all;
    return f;
}

}  // namespace ex05
