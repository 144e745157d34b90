// Exercise 11 · RoPE on a whole sequence, as an autograd op (lecture §4.6,
// with §4.2 and §4.3)
//
// R_{Θ,m} is block-diagonal: d/2 rotations of 2×2, pair i turned by m·θ_i,
// θ_i = base^(-2(i-1)/d). Multiplying by the full d×d matrix costs O(d²) per
// token; apply it pair by pair in O(d) instead (§4.6). For a pair (a, b):
//     a' = a cos(mθ_i) - b sin(mθ_i),    b' = a sin(mθ_i) + b cos(mθ_i),
// where, for pair i = 1 … d/2 and dimensions counted from 1 as the lecture
// does, (a, b) = (x_i, x_{i+d/2}) for ag::RopePairing::Half (Llama; the
// §4.6 matrix form) and (x_{2i-1}, x_2i) for Interleaved (RoFormer; the
// slides). Positions count from 0: the first token is not rotated.
//
// Write rope_apply() (ex11_rope_apply.h) for x [T, d] as ONE autograd op:
// compute y on plain numbers (x.detach().contiguous(), data()), then return
//     ag::record("rope_apply", y, {x}, [...](const ag::Tensor& dy) { return std::vector<ag::Tensor>{dx}; });
// The backward: y = R x, so dx = Rᵀ dy, and the transpose of a rotation is
// the rotation by the negative angle. One helper that turns every pair by
// ±m·θ_i serves both directions. Then the overload with positions 0 … T-1.
//
// Graded: equals the full block-diagonal matrix R_{Θ,m} built entry by
// entry, the reference and ag::rope, for both pairings, any base, given
// positions and 0 … T-1 (T = 1 and d = 2 included); x and dy that arrive
// as non-contiguous views and are left unchanged; one recorded op whose
// backward gives Rᵀ dy with the positions of the call (even if the
// caller's vector changes before backward); O(T·d) tensor memory for the
// forward and backward, not a d×d matrix per token; ag::rope is never run
// (forward, backward, NoGradGuard or not); gradient check. Diagnosed: the
// other pairing, positions from 1, the row index used as the position, a
// clockwise turn, θ_i = base^(-(i-1)/d), an exponent computed in integer
// arithmetic, a backward that turns forward or passes dy through, data()
// read without contiguous(), x overwritten, positions captured by
// reference.
#include "exercises/ex11_rope_apply.h"

#include <cmath>

#include "exercises/not_implemented.h"

namespace ex11 {

ag::Tensor rope_apply(const ag::Tensor& x, const std::vector<int64_t>& positions, double base,
                      ag::RopePairing pairing) {
    // TODO
    (void)x, (void)positions, (void)base, (void)pairing;
    throw exercises::not_implemented("ex11 rope_apply: rope_apply(x, positions, base, pairing)");
}

ag::Tensor rope_apply(const ag::Tensor& x, double base, ag::RopePairing pairing) {
    // TODO
    (void)x, (void)base, (void)pairing;
    throw exercises::not_implemented("ex11 rope_apply: rope_apply(x, base, pairing)");
}

}  // namespace ex11
