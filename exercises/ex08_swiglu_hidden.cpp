// Exercise 8 · SwiGLU's hidden size (lecture §3.2; §10 exercise 8)
//
// A GELU MLP has two d × 4d matrices. SwiGLU,
//     FFN(x) = W_down (SiLU(W_gate x) ⊙ W_up x),
// has three d × d_ff matrices. Which d_ff gives both the same number of
// weights? Hardware likes round sizes, so models round it up to a multiple
// (of 256 for Llama 2: which d_ff for d = 4096? ModernLM rounds to a
// multiple of 4 at d = 64).
//
// Write swiglu_hidden() (ex08_swiglu_hidden.h) in integer arithmetic.
//
// Graded: 11,008 for d = 4096 (multiple 256, Llama 2 7B's size); 172 for
// d = 64 (multiple 4, ModernLM's); 10,923 for multiple 1; the edges: 8d/3
// already a multiple stays as it is, a multiple larger than 8d/3, d = 1;
// then for many d and multiples: a multiple, 3·d·d_ff >= 8d² (at least the
// GELU MLP's weights, biases not counted), the smallest such, and the
// reference; last, large d (up to 10^9) exact in 64-bit integers.
#include "exercises/ex08_swiglu_hidden.h"

#include "exercises/not_implemented.h"

namespace ex08 {

int64_t swiglu_hidden(int64_t d, int64_t multiple) {
    // TODO
    (void)d, (void)multiple;
    throw exercises::not_implemented("ex08 swiglu_hidden");
}

}  // namespace ex08
