// Attempt (wrong): believes a sliding-window model can never look further back than one window, however many
// layers it stacks, so the reach is W - 1 for every L.
#include "exercises/ex06_receptive_field.h"

#include "exercises/not_implemented.h"

namespace ex06 {

int64_t receptive_field(int64_t layers, int64_t window) {
    (void)layers;  // every layer has the same window: the top one decides
    return window - 1;
}

}  // namespace ex06
