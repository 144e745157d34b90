// Attempt (right): counts the window as the causal triangle minus the pairs that are too far back
// (t - j >= W), which form a smaller triangle of (T - W)(T - W + 1)/2 pairs when W < T.
#include "exercises/ex05_window_fractions.h"

#include "exercises/not_implemented.h"

namespace ex05 {

namespace {
int64_t triangle(int64_t n) { return n > 0 ? n * (n + 1) / 2 : 0; }  // 1 + 2 + … + n
}  // namespace

Fractions window_fractions(int64_t T, int64_t W) {
    const int64_t causal = triangle(T);
    const int64_t too_far = triangle(T - W);  // pairs with t - j >= W
    const double all = static_cast<double>(T) * static_cast<double>(T);
    Fractions f;
    f.causal = static_cast<double>(causal) / all;
    f.window = static_cast<double>(causal - too_far) / all;
    f.chunked = static_cast<double>(2 * T * W) / all;
    return f;
}

}  // namespace ex05
