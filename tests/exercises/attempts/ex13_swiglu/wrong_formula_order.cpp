// Attempt (wrong): creates the layers in the order they appear when reading
// W_down(SiLU(W_gate x) ⊙ W_up x) from the left, w_down first; the statement
// fixes w_gate, w_up, w_down, so from the same seed the weights differ from
// every other SwiGLU (checkpoints, nn::SwiGLU).
#include "exercises/ex13_swiglu.h"

#include "exercises/not_implemented.h"

namespace ex13 {

ag::Tensor swiglu(const ag::Tensor& x, const ag::Tensor& w_gate, const ag::Tensor& w_up, const ag::Tensor& w_down) {
    const ag::Tensor gate = ag::silu(ag::linear(x, w_gate));
    return ag::linear(gate * ag::linear(x, w_up), w_down);
}

SwiGLU::SwiGLU(int64_t d_model, int64_t d_ff, ag::Generator& gen) {
    auto down = std::make_shared<nn::Linear>(nn::LinearOptions(d_ff, d_model).bias(false), gen);
    auto gate = std::make_shared<nn::Linear>(nn::LinearOptions(d_model, d_ff).bias(false), gen);
    auto up = std::make_shared<nn::Linear>(nn::LinearOptions(d_model, d_ff).bias(false), gen);
    w_gate = register_module("w_gate", gate);
    w_up = register_module("w_up", up);
    w_down = register_module("w_down", down);
}

ag::Tensor SwiGLU::forward(const ag::Tensor& x) const {
    return swiglu(x, w_gate->weight, w_up->weight, w_down->weight);
}

}  // namespace ex13
