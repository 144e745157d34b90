// Attempt (wrong): uses TW - W(W-1)/2 for every W, missing that a window longer than the sequence is just
// the causal mask (the formula then undercounts, even goes negative).
#include "exercises/ex05_window_fractions.h"

#include "exercises/not_implemented.h"

namespace ex05 {

Fractions window_fractions(int64_t T, int64_t W) {
    const int64_t causal = T * (T + 1) / 2;
    const int64_t window = T * W - W * (W - 1) / 2;  // all T queries see W, minus the missing triangle
    const int64_t chunked = 2 * T * W;
    const double all = static_cast<double>(T * T);
    return {static_cast<double>(causal) / all, static_cast<double>(window) / all, static_cast<double>(chunked) / all};
}

}  // namespace ex05
