#pragma once
// Exercise 11 · RoPE on a whole sequence, as an autograd op with its
// backward (lecture §4.6). The statement is in ex11_rope_apply.cpp.
#include <cstdint>
#include <vector>

#include "autograd/autograd.h"

namespace ex11 {

// y[t] = R_{Θ,m} x[t] with m = positions[t], for x [T, d] (one head; d even):
// pair i is turned counter-clockwise by the angle m·θ_i, θ_i = base^(-2(i-1)/d),
// i = 1 … d/2. ag::RopePairing::Half pairs dim i with i + d/2 (Llama, the
// §4.6 matrix form); Interleaved pairs 2i-1 with 2i (dims from 1) (RoFormer, the slides'
// element-wise form). Returns [T, d]: ONE op recorded with ag::record, whose
// backward rotates the gradient back (by -m·θ_i).
ag::Tensor rope_apply(const ag::Tensor& x, const std::vector<int64_t>& positions, double base, ag::RopePairing pairing);

// The same for a sequence read from its start: positions 0, 1, …, T-1.
ag::Tensor rope_apply(const ag::Tensor& x, double base, ag::RopePairing pairing);

}  // namespace ex11
