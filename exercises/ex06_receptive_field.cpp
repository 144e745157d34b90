// Exercise 6 · the receptive field of stacked windows (lecture §6.3;
// §10 exercise 6)
//
// With a window of W, position t of one layer reads positions t - W + 1 …
// t of the layer below. Stack L such layers: how far back can the top
// layer's output at t depend on the input, indirectly? Mistral 7B has 32
// layers and W = 4096; the lesson's model has 2 layers and W = 4 — which
// is why, in §6.5, it cannot see a subject 9 tokens back.
//
// Write receptive_field() (ex06_receptive_field.h).
//
// Graded: Mistral's 131,040; 6 for 2 layers with W = 4; the reference; and
// a measured check: change one token of a real windowed model's input and
// see how far its outputs move.
#include "exercises/ex06_receptive_field.h"

#include "exercises/not_implemented.h"

namespace ex06 {

int64_t receptive_field(int64_t layers, int64_t window) {
    // TODO
    (void)layers, (void)window;
    throw exercises::not_implemented("ex06 receptive_field");
}

}  // namespace ex06
