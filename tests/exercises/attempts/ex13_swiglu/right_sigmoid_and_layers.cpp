// Attempt (right): SiLU written as z ⊙ σ(z) with ag::sigmoid, the three
// matrices applied through nn::Linear::forward in the module (no bias, so the
// same as ag::linear with the weight), and swiglu() itself via matmul on the
// flattened rows, reshaped back to x's shape.
#include "exercises/ex13_swiglu.h"

#include "exercises/not_implemented.h"

namespace ex13 {
namespace {

ag::Tensor gate_times_up(const ag::Tensor& gate, const ag::Tensor& up) { return gate * ag::sigmoid(gate) * up; }

}  // namespace

ag::Tensor swiglu(const ag::Tensor& x, const ag::Tensor& w_gate, const ag::Tensor& w_up, const ag::Tensor& w_down) {
    const int64_t d = x.size(-1);
    const ag::Tensor rows = x.reshape({-1, d});
    const ag::Tensor hidden =
        gate_times_up(ag::matmul(rows, ag::transpose(w_gate, 0, 1)), ag::matmul(rows, ag::transpose(w_up, 0, 1)));
    ag::Shape shape = x.shape();
    shape.back() = w_down.size(0);
    return ag::matmul(hidden, ag::transpose(w_down, 0, 1)).reshape(shape);
}

SwiGLU::SwiGLU(int64_t d_model, int64_t d_ff, ag::Generator& gen) {
    const auto no_bias = [](int64_t in, int64_t out) { return nn::LinearOptions(in, out).bias(false); };
    w_gate = register_module("w_gate", std::make_shared<nn::Linear>(no_bias(d_model, d_ff), gen));
    w_up = register_module("w_up", std::make_shared<nn::Linear>(no_bias(d_model, d_ff), gen));
    w_down = register_module("w_down", std::make_shared<nn::Linear>(no_bias(d_ff, d_model), gen));
}

ag::Tensor SwiGLU::forward(const ag::Tensor& x) const {
    return w_down->forward(gate_times_up(w_gate->forward(x), w_up->forward(x)));
}

}  // namespace ex13
