// Attempt (right): σ(z) written as (1 + tanh(z/2)) / 2 (tanh never overflows),
// so SiLU(z) = z·(1 + tanh(z/2))/2; the matrices applied with matmul against
// transposed weights after folding x's leading dimensions into rows, then
// unfolded.
#include "exercises/ex13_swiglu.h"

namespace ex13 {

// W_down (SiLU(W_gate x) ⊙ W_up x). Every step is an engine op, so the
// backward comes from the engine: through linear (x Wᵀ), silu, the product.
ag::Tensor swiglu(const ag::Tensor& x, const ag::Tensor& w_gate, const ag::Tensor& w_up, const ag::Tensor& w_down) {
    // gate: how far each of the d_ff channels opens; up: what goes through.
    ag::Shape rows_shape = x.shape();
    const int64_t d = rows_shape.back();
    const ag::Tensor rows = x.reshape({-1, d});
    const ag::Tensor gate = ag::matmul(rows, w_gate.t()), up = ag::matmul(rows, w_up.t());
    const ag::Tensor silu = gate * (1.0 + ag::tanh(gate * 0.5)) * 0.5;
    return ag::matmul(silu * up, w_down.t()).reshape(rows_shape);
}

SwiGLU::SwiGLU(int64_t d_model, int64_t d_ff, ag::Generator& gen) {
    w_gate = register_module("w_gate", std::make_shared<nn::Linear>(nn::LinearOptions(d_model, d_ff).bias(false), gen));
    w_up = register_module("w_up", std::make_shared<nn::Linear>(nn::LinearOptions(d_model, d_ff).bias(false), gen));
    w_down = register_module("w_down", std::make_shared<nn::Linear>(nn::LinearOptions(d_ff, d_model).bias(false), gen));
}

ag::Tensor SwiGLU::forward(const ag::Tensor& x) const {
    return swiglu(x, w_gate->weight, w_up->weight, w_down->weight);
}

}  // namespace ex13
