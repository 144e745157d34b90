// Attempt (wrong): takes the Longformer window of §6.1 literally: a window w
// holds ½w + 1 tokens, so each query sees W/2 + 1 keys instead of W.
#include "exercises/ex05_window_fractions.h"

#include <algorithm>

#include "exercises/not_implemented.h"

namespace ex05 {

Fractions window_fractions(int64_t T, int64_t W) {
    const int64_t keys = std::min(W / 2 + 1, T);
    const double all = static_cast<double>(T) * static_cast<double>(T);
    Fractions f;
    f.causal = static_cast<double>(T * (T + 1) / 2) / all;
    f.window = static_cast<double>(T * keys - keys * (keys - 1) / 2) / all;
    f.chunked = static_cast<double>(2 * T * W) / all;
    return f;
}

}  // namespace ex05
