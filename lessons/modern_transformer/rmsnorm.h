#pragma once
// §3.2 (exercise 9) RMSNorm is LayerNorm without the centring and without β:
//   LayerNorm(x) = (x - μ)/sqrt(mean((x - μ)²) + eps) ⊙ g + β = RMSNorm(x - μ) ⊙ g + β,
// so on rows of zero mean (and β = 0) the two are the same function.
#include <cstdint>

#include "autograd/tensor.h"

namespace lessons::modern_transformer {

// Exercise 9's x = [1, 2, 3, 4] ([1, 4]) through both norms, g = 1, β = 0.
struct NormExample {
    ag::Tensor x;
    ag::Tensor rms;          // RMSNorm(x): only rescaled
    ag::Tensor layer;        // LayerNorm(x): centred, then rescaled
    ag::Tensor centred;      // x - mean(x)
    ag::Tensor rms_centred;  // RMSNorm(x - mean(x)), LayerNorm(x) again
};
NormExample exercise9_norms();

// The identity on `rows` rows of width d, entries N(2, 3²), with a random
// gain g and β = 0 (ag::Generator(0)): the largest gaps to LayerNorm.
struct NormIdentity {
    double centred_gap = 0;    // max |RMSNorm(x - mean(x)) - LayerNorm(x)|: rounding only
    double uncentred_gap = 0;  // max |RMSNorm(x) - LayerNorm(x)|: what the centring does
};
NormIdentity check_norm_identity(int64_t rows, int64_t d);

}  // namespace lessons::modern_transformer
