// Exercise 13 · the SwiGLU feed-forward from engine ops (lecture §3.2;
// exercise 8 sized its hidden layer)
//
// Modern LMs replace the GELU MLP with a gated one (Shazeer, 2020):
//     FFN(x) = W_down (SiLU(W_gate x) ⊙ W_up x),   SiLU(z) = z · σ(z).
// One branch (up) computes the content, the other (gate) how far each of
// the d_ff channels opens; the product goes back down to d. No biases.
//
// Write swiglu() (ex13_swiglu.h) from engine ops (autograd/ops.h: linear,
// silu, mul, …): no backward to write, the engine derives it. The gate is
// the exercise: build SiLU(W_gate x) ⊙ W_up x yourself, without the
// engine's fused ag::swiglu (nor nn::SwiGLU, which calls it). x is [..., d]:
// a single vector, [N, d], [B, T, d], …; the result keeps x's shape. Then
// the module SwiGLU: its constructor creates the three bias-free nn::Linear
// from gen (w_gate, w_up, w_down, in this order) and registers each with
// register_module("w_gate", …) etc., keeping the registered layers in the
// members; forward() applies swiglu() with their weights.
//
// Graded: outputs and the gradients of x and of all three weights (backward
// through the engine) equal the reference's on random inputs, for x [d],
// [N, d], [B, T, d] and 4-D; the same when all four inputs are
// non-contiguous views, and when the gradient arriving at y is one; finite
// and exact, forward and backward, for gate pre-activations up to ±1000
// (SiLU(z) = z·σ(z) never overflows); a gradient check; the fused "swiglu"
// op is never run (forward or backward, also under NoGradGuard). The
// module: parameter names w_gate.weight, w_up.weight, w_down.weight, their
// shapes, no biases, count 3·d·d_ff (ModernLM, d = 64, d_ff = 172: 33,024
// per block); the members are the registered layers; the weights equal
// nn::SwiGLU's from the same seed (the creation order) and gen is left
// where nn::SwiGLU leaves it; forward() equals nn::SwiGLU's, uses the
// current weights (after they change) and no fused op (also under
// NoGradGuard), and the gradients of all three weights equal the
// reference's. Diagnosed: gate and up swapped (SiLU on the up branch), a
// missing SiLU, GELU or σ in SiLU's place, SiLU on the product, the
// branches added, W_down on each branch, the wrong output shape, w_down the
// wrong way round, biases, another creation order.
#include "exercises/ex13_swiglu.h"

#include "exercises/not_implemented.h"

namespace ex13 {

ag::Tensor swiglu(const ag::Tensor& x, const ag::Tensor& w_gate, const ag::Tensor& w_up, const ag::Tensor& w_down) {
    // TODO
    (void)x, (void)w_gate, (void)w_up, (void)w_down;
    throw exercises::not_implemented("ex13 swiglu: swiglu");
}

SwiGLU::SwiGLU(int64_t d_model, int64_t d_ff, ag::Generator& gen) {
    // TODO
    (void)d_model, (void)d_ff, (void)gen;
    throw exercises::not_implemented("ex13 swiglu: SwiGLU::SwiGLU");
}

ag::Tensor SwiGLU::forward(const ag::Tensor& x) const {
    // TODO
    (void)x;
    throw exercises::not_implemented("ex13 swiglu: SwiGLU::forward");
}

}  // namespace ex13
