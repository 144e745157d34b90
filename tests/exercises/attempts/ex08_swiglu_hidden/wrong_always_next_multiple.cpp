// Attempt (wrong): "round up" as "divide, then take the next multiple", so a
// d_ff that is already a multiple (d = 3: 8, a multiple of 4) grows by one
// more step than needed.
#include "exercises/ex08_swiglu_hidden.h"

#include "exercises/not_implemented.h"

namespace ex08 {

int64_t swiglu_hidden(int64_t d, int64_t multiple) {
    const int64_t blocks = 8 * d / (3 * multiple);
    return (blocks + 1) * multiple;
}

}  // namespace ex08
