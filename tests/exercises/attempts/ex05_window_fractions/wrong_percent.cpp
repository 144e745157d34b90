// Attempt (wrong): gives the shares in percent, as the lecture writes them (≈
// 50 %, ≈ 11.7 %, 25 %), instead of fractions of T².
#include "exercises/ex05_window_fractions.h"

#include <algorithm>

#include "exercises/not_implemented.h"

namespace ex05 {

Fractions window_fractions(int64_t T, int64_t W) {
    const int64_t w = std::min(W, T);
    const double all = static_cast<double>(T) * static_cast<double>(T);
    Fractions f;
    f.causal = 100.0 * static_cast<double>(T * (T + 1) / 2) / all;
    f.window = 100.0 * static_cast<double>(T * w - w * (w - 1) / 2) / all;
    f.chunked = 100.0 * static_cast<double>(2 * T * W) / all;
    return f;
}

}  // namespace ex05
