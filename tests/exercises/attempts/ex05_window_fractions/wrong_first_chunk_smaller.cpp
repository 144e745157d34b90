// Attempt (wrong): thinks the first chunk has no chunk before it, so the
// sliding-chunks implementation computes W × W scores there and W × 2W
// elsewhere: 2TW - W², not the 2TW the header defines.
#include "exercises/ex05_window_fractions.h"

#include <algorithm>

#include "exercises/not_implemented.h"

namespace ex05 {

Fractions window_fractions(int64_t T, int64_t W) {
    const int64_t w = std::min(W, T);
    const double all = static_cast<double>(T) * static_cast<double>(T);
    Fractions f;
    f.causal = static_cast<double>(T * (T + 1) / 2) / all;
    f.window = static_cast<double>(T * w - w * (w - 1) / 2) / all;
    f.chunked = static_cast<double>(2 * T * W - W * W) / all;
    return f;
}

}  // namespace ex05
