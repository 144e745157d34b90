#pragma once
// Exercise 12 · RMSNorm as an autograd op with a hand-written backward
// (lecture §3.2). The statement is in ex12_rms_norm_backward.cpp.
#include "autograd/autograd.h"

namespace ex12 {

// §3.2 RMSNorm over the last dim of x [N, d] with weight g [d]:
//     y = x · r ⊙ g,   r = 1 / sqrt(mean(x²) + eps)   (one r per row).
// Returns [N, d]: ONE op recorded with ag::record, whose backward calls
// rms_norm_backward().
ag::Tensor rms_norm(const ag::Tensor& x, const ag::Tensor& weight, double eps);

// The gradients of L = Σ dy ⊙ rms_norm(x, weight, eps) (dy [N, d], the
// gradient arriving at y): dx [N, d] and dweight [d].
struct RmsNormGrads {
    ag::Tensor dx, dweight;
};
RmsNormGrads rms_norm_backward(const ag::Tensor& x, const ag::Tensor& weight, double eps, const ag::Tensor& dy);

}  // namespace ex12
