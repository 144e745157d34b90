#include "lessons/modern_transformer/rmsnorm.h"

#include "autograd/autograd.h"

namespace lessons::modern_transformer {

NormExample exercise9_norms() {
    NormExample n;
    n.x = ag::Tensor::from({1, 4}, {1, 2, 3, 4});
    const ag::Tensor g = ag::Tensor::ones({4}), beta = ag::Tensor::zeros({4});
    n.centred = n.x - ag::mean(n.x, {1}, true);
    n.rms = ag::rms_norm(n.x, g);
    n.layer = ag::layer_norm(n.x, g, beta);
    n.rms_centred = ag::rms_norm(n.centred, g);
    return n;
}

NormIdentity check_norm_identity(int64_t rows, int64_t d) {
    ag::Generator gen(0);
    const ag::Tensor x = ag::Tensor::randn({rows, d}, gen, 2.0, 3.0), gain = ag::Tensor::randn({d}, gen);
    const ag::Tensor layer = ag::layer_norm(x, gain, ag::Tensor::zeros({d}));
    NormIdentity n;
    n.centred_gap = ag::max_abs_diff(ag::rms_norm(x - ag::mean(x, {1}, true), gain), layer);
    n.uncentred_gap = ag::max_abs_diff(ag::rms_norm(x, gain), layer);
    return n;
}

}  // namespace lessons::modern_transformer
