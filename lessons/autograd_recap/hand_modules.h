#pragma once
// §1 Modules with forward() and backward(), the way lecture 3 builds
// autodiff: forward() computes the output and caches what backward() will
// need; backward(dL/dy) returns dL/dx and adds dL/d(parameters) to the
// module's gradients. Every derivative here is written by hand, on plain
// tensors that record no graph.
#include <string>
#include <vector>

#include "autograd/tensor.h"
#include "lessons/autograd_recap/mlp.h"

namespace lessons::autograd_recap {

// y = x Wᵀ + b with W [out, in], b [out]; x [N, in] -> y [N, out].
class Linear {
public:
    Linear(ag::Tensor weight, ag::Tensor bias);
    ag::Tensor forward(const ag::Tensor& x);    // caches x
    ag::Tensor backward(const ag::Tensor& dy);  // W.grad += dyᵀ x, b.grad += Σ_n dy; returns dy W

    ag::Tensor weight, bias, weight_grad, bias_grad;

private:
    ag::Tensor x_;
};

// y = tanh(x), element by element.
class Tanh {
public:
    ag::Tensor forward(const ag::Tensor& x);    // caches y
    ag::Tensor backward(const ag::Tensor& dy);  // returns dy ⊙ (1 - y²)

private:
    ag::Tensor y_;
};

// L = mean over n of -log softmax(z_n)[t_n]; z [N, C], t [N] class ids.
class SoftmaxCrossEntropy {
public:
    double forward(const ag::Tensor& logits, const ag::Tensor& targets);  // caches p = softmax(z), t
    ag::Tensor backward();  // the loss ends the chain (dL/dL = 1): returns (p - onehot(t)) / N

private:
    ag::Tensor p_, targets_;
};

// One module's step in a pass, for printing.
struct Step {
    std::string pass, module, reads, returns, stores;
};

// fc1 = Linear(3→4) → tanh → fc2 = Linear(4→2) → softmax cross-entropy,
// on copies of an Mlp's parameters. `trace`, when given, receives the steps.
class HandMlp {
public:
    explicit HandMlp(const Mlp& mlp);
    double forward(const ag::Tensor& x, const ag::Tensor& targets, std::vector<Step>* trace = nullptr);
    ag::Tensor backward(std::vector<Step>* trace = nullptr);  // returns dL/dx
    // In the order of Mlp::parameters(): W1, b1, W2, b2.
    std::vector<ag::Tensor> parameter_grads() const;

    Linear fc1;
    Tanh act;
    Linear fc2;
    SoftmaxCrossEntropy loss;
};

}  // namespace lessons::autograd_recap
