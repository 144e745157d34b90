// Attempt (wrong): rebuilds every input as a fresh contiguous tensor from its
// values ("views must be copied before the matmul"); the copies have no
// history, so no gradient reaches x or the weights: use the engine's
// contiguous(), which is recorded.
#include "exercises/ex13_swiglu.h"

namespace ex13 {

// W_down (SiLU(W_gate x) ⊙ W_up x). Every step is an engine op, so the
// backward comes from the engine: through linear (x Wᵀ), silu, the product.
namespace {

ag::Tensor fresh(const ag::Tensor& t) { return ag::Tensor::from(t.shape(), t.to_vector()); }

}  // namespace

ag::Tensor swiglu(const ag::Tensor& x_in, const ag::Tensor& w_gate_in, const ag::Tensor& w_up_in,
                  const ag::Tensor& w_down_in) {
    const ag::Tensor x = fresh(x_in), w_gate = fresh(w_gate_in), w_up = fresh(w_up_in), w_down = fresh(w_down_in);
    // gate: how far each of the d_ff channels opens; up: what goes through.
    const ag::Tensor gate = ag::linear(x, w_gate), up = ag::linear(x, w_up);
    return ag::linear(ag::silu(gate) * up, w_down);
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
