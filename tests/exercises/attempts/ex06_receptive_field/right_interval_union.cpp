// Attempt (right): writes L(W - 1) as L·W - L: the L windows of W tokens laid
// end to end, each sharing the one token where it meets the window below (and
// the top window's own position is 0 back).
#include "exercises/ex06_receptive_field.h"

#include "exercises/not_implemented.h"

namespace ex06 {

int64_t receptive_field(int64_t layers, int64_t window) {
    const int64_t tokens_in_windows = layers * window;
    const int64_t shared = layers;  // one per layer: the position the window is
                                    // centred on is not "back"
    return tokens_in_windows - shared;
}

}  // namespace ex06
