// Attempt (wrong): counts the embedding layer as one more step of the relay, (L
// + 1)(W - 1), although the embeddings are position-wise and only the L
// attention layers move information.
#include "exercises/ex06_receptive_field.h"

#include "exercises/not_implemented.h"

namespace ex06 {

int64_t receptive_field(int64_t layers, int64_t window) {
    const int64_t steps = layers + 1;
    return steps * (window - 1);
}

}  // namespace ex06
