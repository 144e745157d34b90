// Attempt (wrong): clips the window at T - 1 ("a query never sees more than the
// T - 1 other tokens"), so a window as long as the sequence misses the last
// query's own diagonal pair.
#include "exercises/ex05_window_fractions.h"

#include <algorithm>

#include "exercises/not_implemented.h"

namespace ex05 {

Fractions window_fractions(int64_t T, int64_t W) {
    const int64_t w = std::min(W, T - 1 > 0 ? T - 1 : 1);
    const double all = static_cast<double>(T) * static_cast<double>(T);
    Fractions f;
    f.causal = static_cast<double>(T * (T + 1) / 2) / all;
    f.window = static_cast<double>(T * w - w * (w - 1) / 2) / all;
    f.chunked = static_cast<double>(2 * T * W) / all;
    return f;
}

}  // namespace ex05
