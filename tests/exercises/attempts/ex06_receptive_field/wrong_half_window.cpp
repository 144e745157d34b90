// Attempt (wrong): reads the window as Longformer's two-sided width (§6.1), so
// a causal layer looks back only half of it, W/2 per layer.
#include "exercises/ex06_receptive_field.h"

#include "exercises/not_implemented.h"

namespace ex06 {

int64_t receptive_field(int64_t layers, int64_t window) { return layers * (window / 2); }

}  // namespace ex06
