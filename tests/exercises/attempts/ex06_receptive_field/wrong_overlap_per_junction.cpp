// Attempt (wrong): thinks adjacent layers' windows overlap in one token that
// must not be counted twice, so it subtracts one per junction: L(W - 1) - (L -
// 1).
#include "exercises/ex06_receptive_field.h"

#include "exercises/not_implemented.h"

namespace ex06 {

int64_t receptive_field(int64_t layers, int64_t window) { return layers * (window - 1) - (layers - 1); }

}  // namespace ex06
