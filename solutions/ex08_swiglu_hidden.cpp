// Exercise 8 · SwiGLU's hidden size: reference solution (lecture §3.2).
#include "exercises/ex08_swiglu_hidden.h"

namespace ex08 {

// 3·d·d_ff = 2·d·4d gives d_ff = 8d/3; the smallest multiple of m that is
// >= 8d/3 is ceil(8d / 3m)·m.
int64_t swiglu_hidden(int64_t d, int64_t multiple) {
    const int64_t step = 3 * multiple;
    return (8 * d + step - 1) / step * multiple;
}

}  // namespace ex08
