// Attempt (wrong): gives every query the full window of W keys (TW pairs), forgetting that the first W - 1
// queries have fewer tokens before them; close to the lecture's 11.7% but not exact.
#include "exercises/ex05_window_fractions.h"

#include "exercises/not_implemented.h"

namespace ex05 {

Fractions window_fractions(int64_t T, int64_t W) {
    const double t = static_cast<double>(T), w = static_cast<double>(W), all = t * t;
    Fractions f;
    f.causal = t * (t + 1) / 2 / all;
    f.window = t * w / all;  // T queries × W keys each
    f.chunked = 2 * t * w / all;
    return f;
}

}  // namespace ex05
