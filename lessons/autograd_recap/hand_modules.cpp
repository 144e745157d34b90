#include "lessons/autograd_recap/hand_modules.h"

#include <cmath>

#include <fmt/format.h>

#include "autograd/ops.h"

namespace lessons::autograd_recap {

// ---- Linear: y = x Wᵀ + b --------------------------------------------------

Linear::Linear(ag::Tensor w, ag::Tensor b)
    : weight(w.detach()),
      bias(b.detach()),
      weight_grad(ag::Tensor::zeros(w.shape())),
      bias_grad(ag::Tensor::zeros(b.shape())) {}

ag::Tensor Linear::forward(const ag::Tensor& x) {
    x_ = x;
    return ag::matmul(x, weight.t()) + bias;
}

ag::Tensor Linear::backward(const ag::Tensor& dy) {
    // y_nj = Σ_i x_ni W_ji + b_j, so dL/dW_ji = Σ_n dy_nj x_ni, dL/db_j = Σ_n dy_nj,
    // dL/dx_ni = Σ_j dy_nj W_ji.
    weight_grad = weight_grad + ag::matmul(dy.t(), x_);
    bias_grad = bias_grad + ag::sum(dy, {0});
    return ag::matmul(dy, weight);
}

// ---- Tanh: y = tanh(x) ------------------------------------------------------

ag::Tensor Tanh::forward(const ag::Tensor& x) {
    y_ = ag::tanh(x);
    return y_;
}

ag::Tensor Tanh::backward(const ag::Tensor& dy) {
    return dy * (1.0 - y_ * y_);  // tanh' = 1 - tanh²
}

// ---- softmax cross-entropy ------------------------------------------------

double SoftmaxCrossEntropy::forward(const ag::Tensor& logits, const ag::Tensor& targets) {
    p_ = ag::softmax(logits);
    targets_ = targets;
    const int64_t n_rows = p_.size(0);
    double total = 0.0;
    for (int64_t n = 0; n < n_rows; ++n) total -= std::log(p_.at({n, static_cast<int64_t>(targets_.at({n}))}));
    return total / static_cast<double>(n_rows);
}

ag::Tensor SoftmaxCrossEntropy::backward() {
    // d(-log p_t)/dz_c = p_c - [c = t]; the mean divides by N.
    const int64_t n_rows = p_.size(0), n_classes = p_.size(1);
    ag::Tensor onehot = ag::Tensor::zeros(p_.shape());
    for (int64_t n = 0; n < n_rows; ++n) onehot.data()[n * n_classes + static_cast<int64_t>(targets_.at({n}))] = 1.0;
    return (p_ - onehot) / static_cast<double>(n_rows);
}

// ---- the MLP, one module at a time ----------------------------------------

namespace {

std::string named(const char* name, const ag::Tensor& t) {
    return fmt::format("{} {}", name, ag::shape_str(t.shape()));
}

std::string label(const char* name, const Linear& layer) {
    return fmt::format("{} = Linear({}→{})", name, layer.weight.size(1), layer.weight.size(0));
}

}  // namespace

HandMlp::HandMlp(const Mlp& mlp) : fc1(mlp.W1, mlp.b1), fc2(mlp.W2, mlp.b2) {}

double HandMlp::forward(const ag::Tensor& x, const ag::Tensor& targets, std::vector<Step>* trace) {
    const ag::Tensor a = fc1.forward(x);
    const ag::Tensor h = act.forward(a);
    const ag::Tensor z = fc2.forward(h);
    const double L = loss.forward(z, targets);
    if (trace)
        trace->insert(trace->end(), {{"forward", label("fc1", fc1), named("x", x), named("a", a), "caches x"},
                                     {"forward", "tanh", named("a", a), named("h", h), "caches h = tanh(a)"},
                                     {"forward", label("fc2", fc2), named("h", h), named("z", z), "caches h"},
                                     {"forward", "softmax cross-entropy", named("z", z) + ", " + named("t", targets),
                                      "L []", "caches p = softmax(z), t"}});
    return L;
}

ag::Tensor HandMlp::backward(std::vector<Step>* trace) {
    const ag::Tensor dz = loss.backward();
    const ag::Tensor dh = fc2.backward(dz);
    const ag::Tensor da = act.backward(dh);
    const ag::Tensor dx = fc1.backward(da);
    if (trace)
        trace->insert(trace->end(), {{"backward", "softmax cross-entropy", "dL/dL = 1", named("dL/dz", dz), "-"},
                                     {"backward", label("fc2", fc2), named("dL/dz", dz), named("dL/dh", dh),
                                      "W2.grad += (dL/dz)ᵀ h, b2.grad += Σ_n dL/dz"},
                                     {"backward", "tanh", named("dL/dh", dh), named("dL/da", da), "-"},
                                     {"backward", label("fc1", fc1), named("dL/da", da), named("dL/dx", dx),
                                      "W1.grad += (dL/da)ᵀ x, b1.grad += Σ_n dL/da"}});
    return dx;
}

std::vector<ag::Tensor> HandMlp::parameter_grads() const {
    return {fc1.weight_grad, fc1.bias_grad, fc2.weight_grad, fc2.bias_grad};
}

}  // namespace lessons::autograd_recap
