#pragma once
// The basic layers, with PyTorch's parameter names, layouts and default
// initialisation (docs/models.md), drawn from the project's seeded
// generator in construction order: weight first, then bias.
#include "nn/module.h"

namespace nn {

// y = x Wᵀ + b.  weight [out, in], bias [out]; both ~ U(-1/√in, 1/√in).
class Linear : public Module {
public:
    Linear(int64_t in_features, int64_t out_features, bool bias, ag::Generator& gen);
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

// (x - mean) / sqrt(var + eps) ⊙ weight + bias over the last dim.
class LayerNorm : public Module {
public:
    explicit LayerNorm(int64_t dim, double eps = 1e-5);
    Tensor forward(const Tensor& x) const { return ag::layer_norm(x, weight, bias, eps); }

    Tensor weight, bias;
    double eps;
};

// §3.2 RMSNorm: x / sqrt(mean(x²) + eps) ⊙ weight. No centring, no bias.
class RMSNorm : public Module {
public:
    explicit RMSNorm(int64_t dim, double eps = 1e-5);
    Tensor forward(const Tensor& x) const { return ag::rms_norm(x, weight, eps); }

    Tensor weight;
    double eps;
};

}  // namespace nn
