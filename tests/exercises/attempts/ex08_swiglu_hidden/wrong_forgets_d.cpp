// Attempt (wrong): sets the weight counts equal, 3 · d_ff = 2 · d · 4d,
// forgetting that each SwiGLU matrix is d × d_ff (d · d_ff weights, not
// d_ff), so d_ff comes out as 8d²/3.
#include "exercises/ex08_swiglu_hidden.h"

namespace ex08 {

int64_t swiglu_hidden(int64_t d, int64_t multiple) {
    const int64_t step = 3 * multiple;
    return (8 * d * d + step - 1) / step * multiple;
}

}  // namespace ex08
