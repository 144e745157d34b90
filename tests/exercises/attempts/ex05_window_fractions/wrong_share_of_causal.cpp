// Attempt (wrong): measures what the window and the chunks cost against causal attention, dividing their
// counts by the T(T+1)/2 causal pairs instead of by all T² pairs.
#include "exercises/ex05_window_fractions.h"

#include <algorithm>

#include "exercises/not_implemented.h"

namespace ex05 {

Fractions window_fractions(int64_t T, int64_t W) {
    const int64_t w = std::min(W, T);
    const double causal_pairs = static_cast<double>(T) * static_cast<double>(T + 1) / 2;
    const double window_pairs = static_cast<double>(T * w - w * (w - 1) / 2);
    const double chunk_scores = 2.0 * static_cast<double>(T) * static_cast<double>(W);
    Fractions f;
    f.causal = causal_pairs / (static_cast<double>(T) * static_cast<double>(T));
    f.window = window_pairs / causal_pairs;
    f.chunked = chunk_scores / causal_pairs;
    return f;
}

}  // namespace ex05
