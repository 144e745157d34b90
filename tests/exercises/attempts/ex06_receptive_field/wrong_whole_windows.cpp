// Attempt (wrong): lays the L windows of W tokens end to end (L·W tokens, minus the current one), missing that
// consecutive windows overlap in the position that passes the information on.
#include "exercises/ex06_receptive_field.h"

#include "exercises/not_implemented.h"

namespace ex06 {

int64_t receptive_field(int64_t layers, int64_t window) {
    const int64_t covered = layers * window;  // one window per layer
    return covered - 1;                       // the current token is not "back"
}

}  // namespace ex06
