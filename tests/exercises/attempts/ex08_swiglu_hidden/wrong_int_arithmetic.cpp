// Attempt (wrong): "sizes fit in an int", so the arithmetic is done in
// 32-bit int; 8·d overflows once d passes 268,435,455, although d and the
// result are int64_t.
#include "exercises/ex08_swiglu_hidden.h"

namespace ex08 {

int64_t swiglu_hidden(int64_t d, int64_t multiple) {
    const int dd = static_cast<int>(d), m = static_cast<int>(multiple);
    const int step = 3 * m;
    return (8 * dd + step - 1) / step * m;
}

}  // namespace ex08
