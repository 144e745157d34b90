#pragma once
// Exercise 13 · the SwiGLU feed-forward from engine ops (lecture §3.2). The
// statement is in ex13_swiglu.cpp.
#include <cstdint>
#include <memory>

#include "autograd/autograd.h"
#include "nn/layers.h"

namespace ex13 {

// §3.2 SwiGLU: W_down (SiLU(W_gate x) ⊙ W_up x), SiLU(z) = z·σ(z), no biases.
// x [..., d]; weights in PyTorch's layout (a linear map is x Wᵀ):
// w_gate, w_up [d_ff, d], w_down [d, d_ff]. Returns [..., d].
ag::Tensor swiglu(const ag::Tensor& x, const ag::Tensor& w_gate, const ag::Tensor& w_up, const ag::Tensor& w_down);

// The same as a module, named as in docs/models.md: three nn::Linear without
// bias, constructed from `gen` in this order and registered as
//   w_gate (d_model -> d_ff), w_up (d_model -> d_ff), w_down (d_ff -> d_model),
// so its parameters are w_gate.weight, w_up.weight, w_down.weight.
class SwiGLU : public nn::Module {
public:
    SwiGLU(int64_t d_model, int64_t d_ff, ag::Generator& gen);
    ag::Tensor forward(const ag::Tensor& x) const;  // swiglu() with the module's weights

    std::shared_ptr<nn::Linear> w_gate, w_up, w_down;
};

}  // namespace ex13
