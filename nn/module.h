#pragma once
// Module: the unit models are built from, named like PyTorch's nn.Module.
//
// A module owns parameters (tensors that require grad) and sub-modules,
// each registered under a name; named_parameters() walks the tree and
// joins the names with dots, so a checkpoint entry reads
// "layers.0.attn.wq.weight" exactly as in PyTorch's state_dict().
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "autograd/autograd.h"

namespace nn {

using ag::Shape;
using ag::Tensor;

class Module {
public:
    virtual ~Module() = default;
    Module() = default;
    Module(const Module&) = delete;             // parameters are shared handles:
    Module& operator=(const Module&) = delete;  // a copy would alias them

    // Every parameter under this module, in registration order, with its
    // dotted name.
    std::vector<std::pair<std::string, Tensor>> named_parameters() const;
    std::vector<Tensor> parameters() const;
    // Parameters that will receive gradients (not frozen).
    std::vector<Tensor> trainable_parameters() const;
    int64_t num_parameters() const;  // all, frozen included
    int64_t num_trainable_parameters() const;

    void zero_grad();
    // Freeze (false) or unfreeze (true) every parameter under this module:
    // a linear probe freezes the body and trains only its head.
    void requires_grad_(bool on);

    // Training or evaluation mode (no module here changes behaviour with
    // it yet; kept for PyTorch's protocol and for dropout-like layers).
    void train(bool on = true);
    void eval() { train(false); }
    bool is_training() const { return training_; }

    const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& named_children() const { return children_; }

protected:
    // Registers t under `name` and returns it; the module keeps the same
    // handle, so assigning the result to a member aliases one tensor.
    Tensor register_parameter(std::string name, Tensor t, bool requires_grad = true);
    template <typename M>
    std::shared_ptr<M> register_module(std::string name, std::shared_ptr<M> m) {
        children_.emplace_back(std::move(name), m);
        return m;
    }

private:
    void collect(const std::string& prefix, std::vector<std::pair<std::string, Tensor>>& out) const;
    void collect(std::vector<Tensor>& out) const;  // the same order, without building the names

    std::vector<std::pair<std::string, Tensor>> params_;
    std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
    bool training_ = true;
};

// Modules named 0, 1, 2, … (PyTorch's nn.ModuleList): "layers.0.attn…".
class ModuleList : public Module {
public:
    template <typename M>
    std::shared_ptr<M> push_back(std::shared_ptr<M> m) {
        return register_module(std::to_string(size_++), std::move(m));
    }
    int64_t size() const { return size_; }

private:
    int64_t size_ = 0;
};

}  // namespace nn
