#include "nn/layers.h"

#include <cmath>

namespace nn {

Linear::Linear(const LinearOptions& o, ag::Generator& gen) {
    const double bound = 1.0 / std::sqrt(static_cast<double>(o.in_features()));
    weight = register_parameter("weight", Tensor::uniform({o.out_features(), o.in_features()}, gen, -bound, bound));
    if (o.bias()) bias = register_parameter("bias", Tensor::uniform({o.out_features()}, gen, -bound, bound));
}

Embedding::Embedding(int64_t num, int64_t dim, ag::Generator& gen) {
    weight = register_parameter("weight", Tensor::randn({num, dim}, gen));
}

LayerNorm::LayerNorm(int64_t dim, double eps_) : eps(eps_) {
    weight = register_parameter("weight", Tensor::ones({dim}));
    bias = register_parameter("bias", Tensor::zeros({dim}));
}

RMSNorm::RMSNorm(int64_t dim, double eps_) : eps(eps_) { weight = register_parameter("weight", Tensor::ones({dim})); }

}  // namespace nn
