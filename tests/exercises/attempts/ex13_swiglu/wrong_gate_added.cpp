// Attempt (wrong): combines the branches with a sum, SiLU(W_gate x) + W_up x,
// as in a residual; ⊙ is the elementwise PRODUCT: the gate scales each channel
// of the content.
#include "exercises/ex13_swiglu.h"

namespace ex13 {

// W_down (SiLU(W_gate x) ⊙ W_up x). Every step is an engine op, so the
// backward comes from the engine: through linear (x Wᵀ), silu, the product.
ag::Tensor swiglu(const ag::Tensor& x, const ag::Tensor& w_gate, const ag::Tensor& w_up, const ag::Tensor& w_down) {
    // gate: how far each of the d_ff channels opens; up: what goes through.
    const ag::Tensor gate = ag::linear(x, w_gate), up = ag::linear(x, w_up);
    return ag::linear(ag::silu(gate) + up, w_down);
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
