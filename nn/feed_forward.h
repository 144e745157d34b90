#pragma once
// The two feed-forward networks of the lecture.
#include <memory>

#include "nn/layers.h"

namespace nn {

// Lecture 2's GPT: proj(GELU(fc x)), hidden 4d, with biases.
class GeluMLP : public Module {
public:
    GeluMLP(int64_t d_model, int64_t d_ff, ag::Generator& gen);
    Tensor forward(const Tensor& x) const;

    std::shared_ptr<Linear> fc, proj;
};

// §3.2 SwiGLU: w_down(SiLU(w_gate x) ⊙ w_up x). One path computes the
// content, the other how far the gate opens; no biases. A third matrix, so
// d_ff ≈ 8d/3 keeps the parameter count of a 4d GELU MLP (exercise 8).
class SwiGLU : public Module {
public:
    SwiGLU(int64_t d_model, int64_t d_ff, ag::Generator& gen);
    Tensor forward(const Tensor& x) const;

    std::shared_ptr<Linear> w_gate, w_up, w_down;
};

}  // namespace nn
