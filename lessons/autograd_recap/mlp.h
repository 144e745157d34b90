#pragma once
// §1 The small MLP lesson 00 takes apart: 3 inputs → 4 tanh units → 2
// classes with a softmax cross-entropy loss, on a batch of 4 seeded examples.
#include <cstdint>
#include <vector>

#include "autograd/tensor.h"

namespace lessons::autograd_recap {

struct Mlp {
    static constexpr int64_t batch = 4, inputs = 3, hidden = 4, classes = 2;

    ag::Tensor x;        // [batch, inputs]
    ag::Tensor targets;  // [batch], class ids
    ag::Tensor W1, b1;   // [hidden, inputs], [hidden]  (weights are [out, in], as in PyTorch)
    ag::Tensor W2, b2;   // [classes, hidden], [classes]

    // Inputs N(0, 1), targets uniform, weights and biases U(-1/√in, 1/√in)
    // like PyTorch's Linear. Every tensor is named; the parameters require grad.
    static Mlp make(uint64_t seed);

    std::vector<ag::Tensor> parameters() const { return {W1, b1, W2, b2}; }
    // The same data with other parameters (in the order of parameters()).
    Mlp with_parameters(const std::vector<ag::Tensor>& p) const;

    // L = cross_entropy(tanh(x W1ᵀ + b1) W2ᵀ + b2, targets) with engine ops,
    // recorded as a computational graph when grad mode is on.
    ag::Tensor loss() const;
};

}  // namespace lessons::autograd_recap
