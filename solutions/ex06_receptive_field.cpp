// Exercise 6 · the receptive field of stacked windows: reference solution
// (lecture §6.3).
#include "exercises/ex06_receptive_field.h"

namespace ex06 {

// Each layer reaches W - 1 positions further back than the one below.
int64_t receptive_field(int64_t layers, int64_t window) { return layers * (window - 1); }

}  // namespace ex06
