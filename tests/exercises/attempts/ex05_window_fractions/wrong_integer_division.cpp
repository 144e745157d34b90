// Attempt (wrong): follows "count exactly, in integers, then divide by T²" but divides the integer counts by
// the integer T², which truncates every share below 1 to 0 before the conversion to double.
#include "exercises/ex05_window_fractions.h"

#include <algorithm>

#include "exercises/not_implemented.h"

namespace ex05 {

Fractions window_fractions(int64_t T, int64_t W) {
    const int64_t w = std::min(W, T), all = T * T;
    const int64_t causal = T * (T + 1) / 2, window = T * w - w * (w - 1) / 2, chunked = 2 * T * W;
    Fractions f;
    f.causal = static_cast<double>(causal / all);
    f.window = static_cast<double>(window / all);
    f.chunked = static_cast<double>(chunked / all);
    return f;
}

}  // namespace ex05
