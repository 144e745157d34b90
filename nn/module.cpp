#include "nn/module.h"

#include <stdexcept>

namespace nn {

Tensor Module::register_parameter(std::string name, Tensor t, bool requires_grad) {
    if (name.empty() || name.find('.') != std::string::npos)
        throw std::invalid_argument("register_parameter: bad name '" + name + "' (no dots, not empty)");
    for (const auto& [existing, _] : params_)
        if (existing == name) throw std::invalid_argument("register_parameter: '" + name + "' registered twice");
    t.requires_grad_(requires_grad);
    params_.emplace_back(std::move(name), t);
    return t;
}

void Module::collect(const std::string& prefix, std::vector<std::pair<std::string, Tensor>>& out) const {
    for (const auto& [name, t] : params_) out.emplace_back(prefix + name, t);
    for (const auto& [name, child] : children_) child->collect(prefix + name + ".", out);
}

std::vector<std::pair<std::string, Tensor>> Module::named_parameters() const {
    std::vector<std::pair<std::string, Tensor>> out;
    collect("", out);
    return out;
}

void Module::collect(std::vector<Tensor>& out) const {
    for (const auto& [_, t] : params_) out.push_back(t);
    for (const auto& [_, child] : children_) child->collect(out);
}

std::vector<Tensor> Module::parameters() const {
    std::vector<Tensor> out;
    collect(out);
    return out;
}

std::vector<Tensor> Module::trainable_parameters() const {
    std::vector<Tensor> out;
    for (const Tensor& t : parameters())
        if (t.requires_grad()) out.push_back(t);
    return out;
}

int64_t Module::num_parameters() const {
    int64_t n = 0;
    for (const Tensor& t : parameters()) n += t.numel();
    return n;
}

int64_t Module::num_trainable_parameters() const {
    int64_t n = 0;
    for (const Tensor& t : trainable_parameters()) n += t.numel();
    return n;
}

void Module::zero_grad() {
    for (Tensor t : parameters()) t.zero_grad();
}

void Module::requires_grad_(bool on) {
    for (Tensor t : parameters()) t.requires_grad_(on);
}

void Module::train(bool on) {
    training_ = on;
    for (auto& [_, child] : children_) child->train(on);
}

}  // namespace nn
