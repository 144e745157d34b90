// Exercise 12 · RMSNorm as an autograd op with a hand-written backward
// (lecture §3.2; exercise 9 wrote its forward on plain vectors)
//
// RMSNorm scales each row of x [N, d] by r = 1 / sqrt(mean(x²) + eps) and
// then by a learned weight g [d]:   y_j = x_j · r · g_j.
// The engine could differentiate this through mul, mean and sqrt; write the
// backward by hand instead, as ag::rms_norm does. Derive it for one row
// with the incoming gradient dy: r depends on EVERY x_k of its row,
//     ∂r/∂x_k = -r³ x_k / d,
// so dx_k = r g_k dy_k + Σ_j dy_j g_j x_j ∂r/∂x_k. Check your result:
//     dx = r (g ⊙ dy) - x r³ mean(g ⊙ dy ⊙ x),
//     dweight = Σ_rows dy ⊙ x r.
//
// Write rms_norm_backward() (plain loops over data(), or engine ops on the
// numbers), then rms_norm() as ONE op: compute y and return
//     ag::record("rms_norm", y, {x, weight}, [...](const ag::Tensor& dy) {
//         RmsNormGrads g = rms_norm_backward(x_saved, weight_saved, eps, dy);
//         return std::vector<ag::Tensor>{g.dx, g.dweight};
//     });
// where x_saved = x.detach() (keep numbers, not the graph).
//
// Graded: the forward against the reference and ag::rms_norm; the backward
// against the reference; the op's gradients against ag::rms_norm's and
// against finite differences (gradcheck); x, weight and dy given as
// non-contiguous views (to rms_norm, to rms_norm_backward, and dy to the
// recorded backward); extreme but valid inputs (a row of zeros, zeros in
// the weight, N = 1, d = 1); x, weight and dy left unchanged (nothing
// computed in place in their storage); the backward uses the x of the call
// even when the caller's variable is reassigned (h = rms_norm(h, g, eps));
// ag::rms_norm is never run (forward, backward, rms_norm_backward; under
// NoGradGuard or not) and rms_norm() records its own op. Diagnosed: one r
// for the whole tensor or one per column, a backward that treats r as a
// constant (the second term missing), a forgotten eps, a second term twice
// too large or without g, dweight not summed over the rows or with a
// factor g.
#include "exercises/ex12_rms_norm_backward.h"

#include <cmath>

#include "exercises/not_implemented.h"

namespace ex12 {

ag::Tensor rms_norm(const ag::Tensor& x, const ag::Tensor& weight, double eps) {
    // TODO
    (void)x, (void)weight, (void)eps;
    throw exercises::not_implemented("ex12 rms_norm_backward: rms_norm");
}

RmsNormGrads rms_norm_backward(const ag::Tensor& x, const ag::Tensor& weight, double eps, const ag::Tensor& dy) {
    // TODO
    (void)x, (void)weight, (void)eps, (void)dy;
    throw exercises::not_implemented("ex12 rms_norm_backward: rms_norm_backward");
}

}  // namespace ex12
