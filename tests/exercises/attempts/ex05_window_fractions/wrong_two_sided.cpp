// Attempt (wrong): counts the window both ways, |t - j| < W, as in Longformer's
// encoder, forgetting that a causal window only looks back (j ≤ t).
#include "exercises/ex05_window_fractions.h"

#include <algorithm>

#include "exercises/not_implemented.h"

namespace ex05 {

Fractions window_fractions(int64_t T, int64_t W) {
    const int64_t w = std::min(W, T);
    // pairs with |t - j| < w: the diagonal, and w - 1 diagonals on each side
    const int64_t pairs = T * (2 * w - 1) - w * (w - 1);
    const double all = static_cast<double>(T) * static_cast<double>(T);
    Fractions f;
    f.causal = static_cast<double>(T * (T + 1) / 2) / all;
    f.window = static_cast<double>(pairs) / all;
    f.chunked = static_cast<double>(2 * T * W) / all;
    return f;
}

}  // namespace ex05
