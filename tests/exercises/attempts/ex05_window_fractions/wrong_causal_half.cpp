// Attempt (wrong): takes causal attention to use exactly half of the T² pairs ("the lower triangle is half the
// square"), dropping half of the diagonal; the window is counted right.
#include "exercises/ex05_window_fractions.h"

#include <algorithm>

#include "exercises/not_implemented.h"

namespace ex05 {

Fractions window_fractions(int64_t T, int64_t W) {
    Fractions f;
    const double all = static_cast<double>(T) * static_cast<double>(T);
    f.causal = 0.5;  // the triangle below the diagonal of the square
    int64_t window = 0;
    for (int64_t t = 0; t < T; ++t) window += std::min(t + 1, W);
    f.window = static_cast<double>(window) / all;
    f.chunked = 2.0 * static_cast<double>(W) / static_cast<double>(T);
    return f;
}

}  // namespace ex05
