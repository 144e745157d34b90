// Attempt (right): walks up the multiples until SwiGLU's 3·d·d_ff weights
// reach the GELU MLP's 2·d·4d.
#include "exercises/ex08_swiglu_hidden.h"

#include "exercises/not_implemented.h"

namespace ex08 {

int64_t swiglu_hidden(int64_t d, int64_t multiple) {
    const int64_t gelu_weights = 2 * d * (4 * d);
    int64_t d_ff = 0;
    while (3 * d * d_ff < gelu_weights) d_ff += multiple;
    return d_ff;
}

}  // namespace ex08
