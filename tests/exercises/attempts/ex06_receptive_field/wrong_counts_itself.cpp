// Attempt (wrong): counts the tokens the top output can depend on, the position itself included, instead of
// how many tokens back it reaches: L(W - 1) + 1.
#include "exercises/ex06_receptive_field.h"

#include "exercises/not_implemented.h"

namespace ex06 {

int64_t receptive_field(int64_t layers, int64_t window) {
    const int64_t back = layers * (window - 1);
    return back + 1;  // t - back … t
}

}  // namespace ex06
