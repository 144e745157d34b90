#pragma once
// Optimisers with PyTorch's semantics (torch.optim.SGD, torch.optim.AdamW,
// torch.nn.utils.clip_grad_norm_), step for step.
//
//     optim::AdamW opt(model.trainable_parameters(), 3e-3);
//     for (int64_t step = 0; step < steps; ++step) {
//         opt.zero_grad();
//         Tensor loss = ...;  loss.backward();
//         optim::clip_grad_norm(opt.params(), 1.0);
//         opt.lr = schedule.lr(step);
//         opt.step();
//     }
//
// step() updates each parameter in place (the module keeps its handles).
// A parameter is skipped, its state untouched, when it has no gradient or
// is frozen (requires_grad false), so a stale gradient never moves a frozen
// parameter.
#include <cstdint>
#include <vector>

#include "autograd/storage.h"
#include "autograd/tensor.h"

namespace optim {

class Optimizer {
public:
    // Throws std::invalid_argument on an undefined, non-contiguous or
    // repeated parameter, or on lr < 0.
    Optimizer(std::vector<ag::Tensor> params, double lr);
    virtual ~Optimizer() = default;
    Optimizer(const Optimizer&) = delete;
    Optimizer& operator=(const Optimizer&) = delete;

    virtual void step() = 0;
    void zero_grad();  // drops every gradient (PyTorch's set_to_none=True)
    const std::vector<ag::Tensor>& params() const { return params_; }

    double lr;  // read at every step: a schedule sets it before step()

protected:
    std::vector<ag::Tensor> params_;
};

// SGD with momentum μ and L2 weight decay λ, per element:
//   d = g + λ p;   buf = μ buf + d (buf = d on the first step);   p -= lr buf
// (with μ = 0, no buffer: p -= lr d).
class SGD : public Optimizer {
public:
    SGD(std::vector<ag::Tensor> params, double lr, double momentum = 0.0, double weight_decay = 0.0);
    void step() override;

    double momentum, weight_decay;

private:
    std::vector<ag::Storage> buffer_;  // per parameter; empty until its first step (64-byte aligned, see AdamW)
};

// AdamW (Loshchilov & Hutter), decoupled weight decay λ. Per parameter, at
// its own step count t = 1, 2, ...:
//   p *= 1 - lr λ
//   m = β1 m + (1-β1) g          v = β2 v + (1-β2) g²
//   p -= lr/(1-β1^t) · m / (sqrt(v)/sqrt(1-β2^t) + eps)
class AdamW : public Optimizer {
public:
    AdamW(std::vector<ag::Tensor> params, double lr = 1e-3, double beta1 = 0.9, double beta2 = 0.999, double eps = 1e-8,
          double weight_decay = 0.01);
    void step() override;

    double beta1, beta2, eps, weight_decay;

private:
    struct State {
        int64_t step = 0;
        // exp_avg, exp_avg_sq: in the tensors' pool, whose blocks start on a
        // 64-byte line like the parameters and gradients, so that the
        // update's vector loads and stores never straddle two cache lines
        // (with std::vector's 16-byte alignment a ModernLM step's update
        // took 0.21 ms instead of 0.15 on a Zen 4).
        ag::Storage m, v;
    };
    std::vector<State> state_;  // per parameter
};

// torch.nn.utils.clip_grad_norm_: the 2-norm of all gradients together
// (frozen parameters and those without a gradient left out); when
// max_norm / (norm + 1e-6) < 1, every gradient is multiplied by it.
// Returns the norm before clipping. The sum of squares runs in parameter
// order, so the result is the same for any thread count.
double clip_grad_norm(const std::vector<ag::Tensor>& params, double max_norm);

}  // namespace optim
