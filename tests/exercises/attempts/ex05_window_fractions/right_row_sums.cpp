// Attempt (right): counts row by row in closed form per row: query t sees min(t
// + 1, W) keys; sums the rows in a loop (T up to 2^20 is a fast loop), and
// divides each count by T² in long double.
#include "exercises/ex05_window_fractions.h"

#include <algorithm>

#include "exercises/not_implemented.h"

namespace ex05 {

Fractions window_fractions(int64_t T, int64_t W) {
    int64_t causal = 0, window = 0;
    for (int64_t t = 0; t < T; ++t) {
        causal += t + 1;
        window += std::min(t + 1, W);
    }
    const long double all = static_cast<long double>(T) * static_cast<long double>(T);
    Fractions f;
    f.causal = static_cast<double>(static_cast<long double>(causal) / all);
    f.window = static_cast<double>(static_cast<long double>(window) / all);
    f.chunked = static_cast<double>(static_cast<long double>(2 * T * W) / all);
    return f;
}

}  // namespace ex05
