#pragma once
// §4.2 and §4.6: the rotation R_{Θ,m} of RoPE written three ways, so that
// lesson 02 can check they agree with each other and with the engine's
// ag::rope. Vectors are the rows of x [N, d], row n at absolute position
// positions[n]; d is even.
//
//   full matrix     R_{Θ,m} x, the d×d block-diagonal matrix of §4.2;
//   element-wise    the slides' O(d) form (RoFormer): pairs (x_{2i}, x_{2i+1});
//   matrix form     §4.6: Y ⊙ cos C + rotate_half(Y) ⊙ sin C on all N rows
//                   at once, pairs (x_i, x_{i+d/2}) (Llama, GPT-NeoX).
//
// The last pairs dimensions differently: it equals the other two after the
// permutation to_half_order (dimension 2i → i, 2i+1 → i + d/2).
#include <cstdint>
#include <vector>

#include "autograd/ops.h"

namespace lessons::rope {

// §4.2 θ_i = base^(-2(i-1)/d), i = 1 … d/2 (stored from index 0): the first
// pair turns 1 radian per position, the last about 1/base. base = 1 gives
// every pair the same frequency θ = 1 (part 4's "one frequency").
std::vector<double> frequencies(int64_t d, double base = 10000.0);

// §4.2 R_{Θ,m}: block i (rows and columns 2i, 2i+1) is
//   [cos mθ_i  -sin mθ_i]
//   [sin mθ_i   cos mθ_i],   zero outside the blocks.   [d, d]
ag::Tensor rotation_matrix(int64_t m, int64_t d, double base = 10000.0);

// Row n of x multiplied by R_{Θ,positions[n]}: the definition, O(d²) per row.
ag::Tensor rotate_full_matrix(const ag::Tensor& x, const std::vector<int64_t>& positions, double base = 10000.0);

// The slides' element-wise form, O(d) per row:
//   R x = x ⊙ (cos mθ_1, cos mθ_1, cos mθ_2, cos mθ_2, …)
//       + (-x_2, x_1, -x_4, x_3, …) ⊙ (sin mθ_1, sin mθ_1, sin mθ_2, sin mθ_2, …).
ag::Tensor rotate_elementwise(const ag::Tensor& x, const std::vector<int64_t>& positions, double base = 10000.0);

// §4.6 the matrix form on all rows at once: C [N, d] has row n equal to
// (mθ_1, …, mθ_{d/2}, mθ_1, …, mθ_{d/2}) with m = positions[n], and
//   Y_rot = Y ⊙ cos C + rotate_half(Y) ⊙ sin C,
//   rotate_half(Y) = [-Y_{:, d/2:d}, Y_{:, 0:d/2}].
ag::Tensor rotate_matrix_form(const ag::Tensor& y, const std::vector<int64_t>& positions, double base = 10000.0);

// The engine's fused op, ag::rope, on the rows of x (one head of size d).
ag::Tensor rotate_engine(const ag::Tensor& x, const std::vector<int64_t>& positions, ag::RopePairing pairing,
                         double base = 10000.0);

// The permutation between the two pairings: column 2i goes to i and 2i+1 to
// i + d/2 (from_half_order undoes it).
ag::Tensor to_half_order(const ag::Tensor& x);
ag::Tensor from_half_order(const ag::Tensor& x);

// The positions 0 … n-1.
std::vector<int64_t> first_positions(int64_t n);

// §4.2, §4.6 how far each O(d) form lands from the definition (the full
// matrix): max |form - full matrix| over every entry of n vectors
// x ~ N(0, 1) of size d at positions 0 … n-1, drawn from ag::Generator(seed),
// one FormErrors for each seed 0 … seeds-1. The half-split
// forms pair dimension i with i + d/2, so they rotate to_half_order(x) and
// their output goes back through from_half_order.
struct FormErrors {
    double elementwise = 0;         // the slides' element-wise form, pairs (2i, 2i+1)
    double engine_interleaved = 0;  // ag::rope, RopePairing::Interleaved (RoFormer)
    double matrix_form = 0;         // §4.6 matrix form on the permuted x
    double engine_half = 0;         // ag::rope, RopePairing::Half (Llama, GPT-NeoX), permuted x
    double unpermuted = 0;          // §4.6 matrix form on x itself: the other pairing, not a rounding error
};
std::vector<FormErrors> forms_against_full_matrix(int64_t n, int64_t d, int seeds);

// §4.5 question 1, a rotation keeps lengths: max | ‖R_m x‖ - ‖x‖ | over n
// vectors x ~ N(0, 1) of size d (ag::Generator(0)) at positions m = 0 … n-1,
// rotated by the engine's ag::rope.
double norm_change(int64_t n, int64_t d);

}  // namespace lessons::rope
