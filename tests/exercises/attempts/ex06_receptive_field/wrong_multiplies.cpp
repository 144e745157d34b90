// Attempt (wrong): thinks of stacked windows like dilated convolutions, where every layer multiplies the span
// by W, so the reach is W^L - 1 instead of growing by W - 1 per layer.
#include "exercises/ex06_receptive_field.h"

#include "exercises/not_implemented.h"

namespace ex06 {

int64_t receptive_field(int64_t layers, int64_t window) {
    int64_t span = 1;  // tokens the output depends on
    for (int64_t l = 0; l < layers && span < (int64_t{1} << 50); ++l) span *= window;
    return span - 1;
}

}  // namespace ex06
