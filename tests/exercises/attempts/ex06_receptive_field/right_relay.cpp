// Attempt (right): follows the information down the stack: the earliest input position that reaches the top
// output at t moves W - 1 further back with every layer; the answer is how far that is from t.
#include "exercises/ex06_receptive_field.h"

#include "exercises/not_implemented.h"

namespace ex06 {

int64_t receptive_field(int64_t layers, int64_t window) {
    const int64_t t = 0;  // any position: only the distance matters
    int64_t earliest = t;
    for (int64_t layer = 0; layer < layers; ++layer) earliest -= window - 1;  // reads earliest - W + 1 … earliest
    return t - earliest;
}

}  // namespace ex06
