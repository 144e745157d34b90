// Attempt (wrong): computes 8d/3 as 8·(d/3) so the product cannot grow
// large, but the integer division d/3 drops d's remainder before the
// multiplication (d = 64: 8·21 = 168 instead of 170.67), which can land a
// whole multiple below 8d/3.
#include "exercises/ex08_swiglu_hidden.h"

namespace ex08 {

int64_t swiglu_hidden(int64_t d, int64_t multiple) {
    const int64_t d_ff = 8 * (d / 3);
    return (d_ff + multiple - 1) / multiple * multiple;
}

}  // namespace ex08
