#include "nn/feed_forward.h"

namespace nn {

GeluMLP::GeluMLP(int64_t d_model, int64_t d_ff, ag::Generator& gen) {
    fc = register_module("fc", std::make_shared<Linear>(LinearOptions(d_model, d_ff), gen));
    proj = register_module("proj", std::make_shared<Linear>(LinearOptions(d_ff, d_model), gen));
}

Tensor GeluMLP::forward(const Tensor& x) const { return proj->forward(ag::gelu(fc->forward(x))); }

SwiGLU::SwiGLU(int64_t d_model, int64_t d_ff, ag::Generator& gen) {
    w_gate = register_module("w_gate", std::make_shared<Linear>(LinearOptions(d_model, d_ff).bias(false), gen));
    w_up = register_module("w_up", std::make_shared<Linear>(LinearOptions(d_model, d_ff).bias(false), gen));
    w_down = register_module("w_down", std::make_shared<Linear>(LinearOptions(d_ff, d_model).bias(false), gen));
}

Tensor SwiGLU::forward(const Tensor& x) const {
    return w_down->forward(ag::swiglu(w_gate->forward(x), w_up->forward(x)));
}

}  // namespace nn
