// Attempt (wrong): builds SiLU from exp as z·e^z / (1 + e^z); equal to z·σ(z)
// on paper, but e^z overflows beyond z ≈ 709 and inf/inf gives NaN, where
// SiLU itself is simply ≈ z.
#include "exercises/ex13_swiglu.h"

#include "exercises/not_implemented.h"

namespace ex13 {
namespace {

ag::Tensor silu_by_hand(const ag::Tensor& z) {
    const ag::Tensor e = ag::exp(z);
    return z * e / (e + 1.0);
}

}  // namespace

ag::Tensor swiglu(const ag::Tensor& x, const ag::Tensor& w_gate, const ag::Tensor& w_up, const ag::Tensor& w_down) {
    return ag::linear(silu_by_hand(ag::linear(x, w_gate)) * ag::linear(x, w_up), w_down);
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
