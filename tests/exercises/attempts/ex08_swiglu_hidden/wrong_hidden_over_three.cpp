// Attempt (wrong): spreads the GELU MLP's 4d hidden units over SwiGLU's
// three matrices, d_ff = 4d/3, instead of matching the number of WEIGHTS
// (3·d·d_ff = 2·d·4d gives 8d/3).
#include "exercises/ex08_swiglu_hidden.h"

#include "exercises/not_implemented.h"

namespace ex08 {

int64_t swiglu_hidden(int64_t d, int64_t multiple) {
    const int64_t gelu_hidden = 4 * d;
    const int64_t d_ff = (gelu_hidden + 2) / 3;  // rounded up
    return (d_ff + multiple - 1) / multiple * multiple;
}

}  // namespace ex08
