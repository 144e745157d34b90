#pragma once
// §2.4 the autoencoder: what should an unsupervised first layer predict?
// Its own input.  encoder z = h(W x + b), decoder x' = h(W' z + b'),
// loss = mean squared reconstruction error ‖x - x'‖² / n. With z smaller
// than x the layer must learn a compressed representation. Greedy
// layer-wise pre-training trains one such layer, feeds its codes z to the
// next, and so on; the trained encoders are then stacked under a
// classifier and fine-tuned together.
#include <memory>
#include <vector>

#include "nn/layers.h"

namespace nn {

class Autoencoder : public Module {
public:
    Autoencoder(int64_t in, int64_t hidden, ag::Generator& gen);
    Tensor encode(const Tensor& x) const { return ag::sigmoid(enc->forward(x)); }  // z = h(W x + b)
    Tensor decode(const Tensor& z) const { return ag::sigmoid(dec->forward(z)); }  // x' = h(W' z + b')
    Tensor reconstruct(const Tensor& x) const { return decode(encode(x)); }
    Tensor loss(const Tensor& x) const { return ag::mse_loss(reconstruct(x), x); }

    std::shared_ptr<Linear> enc, dec;
};

// The codes of a stack of trained encoders: h(W_n … h(W_1 x)).
Tensor encode_stack(const std::vector<std::shared_ptr<Autoencoder>>& stack, const Tensor& x);

// A linear head on one position's hidden state (§2.8: the last prefix
// position): hidden [B, T, d], last[b] = the position read in row b;
// returns logits [B, classes]. weight [classes, d], bias [classes].
class ClassifierHead : public Module {
public:
    ClassifierHead(int64_t d, int64_t classes, ag::Generator& gen);
    Tensor forward(const Tensor& hidden, const std::vector<int64_t>& last) const;
    Tensor forward(const Tensor& features) const { return ag::linear(features, weight, bias); }  // [B, d]

    Tensor weight, bias;
};

}  // namespace nn
