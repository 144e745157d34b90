// Attempt (wrong): computes L(W - 1) in int ("a few thousand layers and
// positions at most"), so large stacks or windows overflow 32 bits.
#include "exercises/ex06_receptive_field.h"

#include "exercises/not_implemented.h"

namespace ex06 {

int64_t receptive_field(int64_t layers, int64_t window) {
    const int span = static_cast<int>(window) - 1;
    return static_cast<int>(layers) * span;
}

}  // namespace ex06
