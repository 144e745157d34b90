#pragma once
// Exercise 8 · SwiGLU's hidden size (lecture §3.2, exercise 8). The
// statement is in ex08_swiglu_hidden.cpp.
#include <cstdint>

namespace ex08 {

// The SwiGLU hidden size d_ff whose three d × d_ff matrices hold as many
// weights as a GELU MLP's two d × 4d ones, rounded UP to a multiple of
// `multiple`.
int64_t swiglu_hidden(int64_t d, int64_t multiple);

}  // namespace ex08
