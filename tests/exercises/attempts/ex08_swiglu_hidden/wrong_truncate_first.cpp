// Attempt (wrong): first computes d_ff = 8d/3 in integers (which truncates
// 10,922.67 to 10,922) and only then rounds that up to the multiple, so
// where 8d/3 is not an integer the fraction is already lost.
#include "exercises/ex08_swiglu_hidden.h"

#include "exercises/not_implemented.h"

namespace ex08 {

int64_t swiglu_hidden(int64_t d, int64_t multiple) {
    const int64_t d_ff = 8 * d / 3;
    const int64_t remainder = d_ff % multiple;
    return remainder == 0 ? d_ff : d_ff + multiple - remainder;
}

}  // namespace ex08
