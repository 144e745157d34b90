// Attempt (wrong): counts the pairs in int ("T is at most a few tens of
// thousands"), so T² and the window's count overflow 32 bits for long sequences
// (T = 2^20).
#include "exercises/ex05_window_fractions.h"

#include <algorithm>

#include "exercises/not_implemented.h"

namespace ex05 {

Fractions window_fractions(int64_t T, int64_t W) {
    const int t = static_cast<int>(T), w = static_cast<int>(std::min(W, T)), big = static_cast<int>(W);
    const double all = static_cast<double>(t * t);
    Fractions f;
    f.causal = static_cast<double>(t * (t + 1) / 2) / all;
    f.window = static_cast<double>(t * w - w * (w - 1) / 2) / all;
    f.chunked = static_cast<double>(2 * t * big) / all;
    return f;
}

}  // namespace ex05
