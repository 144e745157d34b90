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
// Count tokens BACK: position t itself is 0 back, so one layer reaches
// W - 1. Any L ≥ 1 and W ≥ 1 (W = 1: each position sees only itself).
//
// Graded: Mistral's 131,040; 6 for 2 layers with W = 4; 0 for W = 1; one
// layer (W - 1) for W = 1 … 10, W = 1 and W = 2 for 1 … 10 layers; the
// reference on random sizes, and a reach beyond 2^31 (128 layers, W =
// 2^25); and a measured check: change one token of a real windowed model's
// input (1 … 3 layers, W = 1 … 4) and see how far its outputs move. A known
// wrong turn (W or W/2 per layer, one layer short or too many, two steps
// per layer, only the top layer's window, the position itself counted,
// whole windows of W laid end to end, one off per junction, one position
// per extra layer, windows multiplied, 32-bit overflow) is named in the
// message.
#include "exercises/ex06_receptive_field.h"

#include "exercises/not_implemented.h"

namespace ex06 {

int64_t receptive_field(int64_t layers, int64_t window) {
    // TODO
    (void)layers, (void)window;
    throw exercises::not_implemented("ex06 receptive_field");
}

}  // namespace ex06
