#pragma once
// The basic layers, with PyTorch's parameter names, layouts and default
// initialisation (docs/models.md), drawn from the project's seeded
// generator in construction order: weight first, then bias.
#include "nn/module.h"

namespace nn {

// What a Linear layer is, named as in libtorch:
//   Linear(LinearOptions(d, d).bias(false), gen)
class LinearOptions {
public:
    LinearOptions(int64_t in_features, int64_t out_features) : in_(in_features), out_(out_features) {}
    LinearOptions& bias(bool on) {
        bias_ = on;
        return *this;
    }
    int64_t in_features() const { return in_; }
    int64_t out_features() const { return out_; }
    bool bias() const { return bias_; }

private:
    int64_t in_, out_;
    bool bias_ = true;  // PyTorch's default
};

// y = x Wᵀ + b.  weight [out, in], bias [out]; both ~ U(-1/√in, 1/√in).
class Linear : public Module {
public:
    Linear(const LinearOptions& options, ag::Generator& gen);
    Tensor forward(const Tensor& x) const { return ag::linear(x, weight, bias); }

    Tensor weight, bias;  // bias undefined without one
};

// out[..., :] = weight[ids[...], :].  weight [num, dim] ~ N(0, 1).
class Embedding : public Module {
public:
    Embedding(int64_t num, int64_t dim, ag::Generator& gen);
    Tensor forward(const Tensor& ids) const { return ag::embedding(weight, ids); }

    Tensor weight;
};

// A normalisation over the last dim: what a model's final norm is, in
// either recipe.
class Norm : public Module {
public:
    virtual Tensor forward(const Tensor& x) const = 0;
};

// (x - mean) / sqrt(var + eps) ⊙ weight + bias over the last dim.
class LayerNorm final : public Norm {
public:
    explicit LayerNorm(int64_t dim, double eps = 1e-5);
    Tensor forward(const Tensor& x) const override { return ag::layer_norm(x, weight, bias, eps); }

    Tensor weight, bias;
    double eps;
};

// §3.2 RMSNorm: x / sqrt(mean(x²) + eps) ⊙ weight. No centring, no bias.
class RMSNorm final : public Norm {
public:
    explicit RMSNorm(int64_t dim, double eps = 1e-5);
    Tensor forward(const Tensor& x) const override { return ag::rms_norm(x, weight, eps); }

    Tensor weight;
    double eps;
};

}  // namespace nn
