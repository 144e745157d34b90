// Attempt (wrong): ignores "in integer arithmetic" and takes the ceiling in
// float, ceil(8d / 3 / multiple) · multiple; float keeps 24 bits, so for
// large d the fraction of 8d/3 is rounded away before the ceiling.
#include <cmath>

#include "exercises/ex08_swiglu_hidden.h"

namespace ex08 {

int64_t swiglu_hidden(int64_t d, int64_t multiple) {
    const float steps = std::ceil(8.0f * static_cast<float>(d) / 3.0f / static_cast<float>(multiple));
    return static_cast<int64_t>(steps) * multiple;
}

}  // namespace ex08
