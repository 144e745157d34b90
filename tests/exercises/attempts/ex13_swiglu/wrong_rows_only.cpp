// Attempt (wrong): writes the feed-forward for a batch of rows x [N, d] with
// matmul against the transposed weights and returns [N, d]; the header takes
// x [..., d] (a single vector, [B, T, d], ...), and the result must keep x's
// leading dimensions.
#include "exercises/ex13_swiglu.h"

#include "exercises/not_implemented.h"

namespace ex13 {

ag::Tensor swiglu(const ag::Tensor& x, const ag::Tensor& w_gate, const ag::Tensor& w_up, const ag::Tensor& w_down) {
    const ag::Tensor rows = x.reshape({-1, x.size(-1)});
    const ag::Tensor gate = ag::matmul(rows, ag::transpose(w_gate, 0, 1));
    const ag::Tensor up = ag::matmul(rows, ag::transpose(w_up, 0, 1));
    return ag::matmul(ag::silu(gate) * up, ag::transpose(w_down, 0, 1));
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
