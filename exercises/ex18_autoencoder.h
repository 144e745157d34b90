#pragma once
// Exercise 18 · one autoencoder layer and greedy layer-wise stacking
// (lecture §2.4). The statement is in ex18_autoencoder.cpp.
#include <cstdint>
#include <vector>

#include "autograd/generator.h"
#include "autograd/tensor.h"

namespace ex18 {

// One layer's parameters, laid out like nn::Autoencoder's (nn/autoencoder.h:
// enc.weight, enc.bias, dec.weight, dec.bias; nn::Linear's [out, in]).
struct Layer {
    ag::Tensor enc_weight;  // W  [hidden, in]
    ag::Tensor enc_bias;    // b  [hidden]
    ag::Tensor dec_weight;  // W' [in, hidden]
    ag::Tensor dec_bias;    // b' [in]
    std::vector<ag::Tensor> parameters() const { return {enc_weight, enc_bias, dec_weight, dec_bias}; }
};

// A new layer in -> hidden with the numbers nn::Autoencoder(in, hidden, gen)
// draws: W, b, W', b' in that order, each uniform in ±1/√fan_in (fan_in =
// in for W and b, hidden for W' and b'; nn::Linear's default). All four
// require grad.
Layer new_layer(int64_t in, int64_t hidden, ag::Generator& gen);

// x [N, in] (one example per row) -> the codes z = h(W x + b) [N, hidden],
// h = sigmoid.
ag::Tensor encode(const Layer& layer, const ag::Tensor& x);
// z [N, hidden] -> the reconstruction x' = h(W' z + b') [N, in].
ag::Tensor decode(const Layer& layer, const ag::Tensor& z);
// The reconstruction error, mean squared over all N·in numbers:
// Σ (x' - x)² / (N·in), a scalar tensor [] that gradients flow through.
ag::Tensor reconstruction_loss(const Layer& layer, const ag::Tensor& x);

// One step of full-batch gradient descent on reconstruction_loss(layer, x):
// p <- p - lr · dL/dp for each of the four parameters, in place (the
// tensors keep their identity), gradients cleared afterwards. Returns the
// loss before the step.
double train_step(Layer& layer, const ag::Tensor& x, double lr);

// Greedy layer-wise pre-training. widths = {in, h1, h2, …} with in =
// x.size(1). Layer 1 = new_layer(in, h1, gen) trained `steps` train_steps
// on x; layer l = new_layer(h_{l-1}, h_l, gen), drawn after layer l-1 was
// trained, trained `steps` train_steps on the codes of the trained layers
// 1 … l-1 (fixed: computed without gradient). Returns the layers in order.
std::vector<Layer> train_stack(const ag::Tensor& x, const std::vector<int64_t>& widths, int64_t steps, double lr,
                               ag::Generator& gen);

// The stacked encoder: h(W_n … h(W_1 x + b_1) … + b_n), [N, widths.back()].
ag::Tensor encode_stack(const std::vector<Layer>& layers, const ag::Tensor& x);

}  // namespace ex18
