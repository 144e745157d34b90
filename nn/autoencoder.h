#pragma once
// §2.4 the autoencoder: what should an unsupervised first layer predict?
// Its own input.  encoder z = h(W x + b), decoder x' = h(W' z + b') (an
// untied W'), loss = the reconstruction error. With z smaller than x the
// layer must learn a compressed representation. Greedy layer-wise
// pre-training trains one such layer, feeds its codes z to the next, and so
// on; the trained encoders are then stacked under a classifier and
// fine-tuned together.
//
//   Autoencoder(AutoencoderOptions(784, 256).unit(Unit::Tanh)
//                   .reconstruction(Reconstruction::PixelCrossEntropy), gen)

#include <cstdint>
#include <memory>
#include <vector>

#include "nn/layers.h"

namespace nn {

// The squashing function h of the codes (the 2006 nets used both).
enum class Unit { Sigmoid, Tanh };

// What the decoder reconstructs, and how its error is measured:
//   SquaredError       x' = h(W' z + b'), loss = mean (x - x')²: for codes
//                      of a layer below (in h's range);
//   PixelCrossEntropy  x' = σ(W' z + b'), loss = mean binary cross-entropy
//                      of x' against x: for pixels in [0, 1], read as the
//                      probability that a pixel is ink.
enum class Reconstruction { SquaredError, PixelCrossEntropy };

class AutoencoderOptions {
public:
    AutoencoderOptions(int64_t in, int64_t hidden) : in_(in), hidden_(hidden) {}
    AutoencoderOptions& unit(Unit u) {
        unit_ = u;
        return *this;
    }
    AutoencoderOptions& reconstruction(Reconstruction r) {
        reconstruction_ = r;
        return *this;
    }
    int64_t in() const { return in_; }
    int64_t hidden() const { return hidden_; }
    Unit unit() const { return unit_; }
    Reconstruction reconstruction() const { return reconstruction_; }

private:
    int64_t in_, hidden_;
    Unit unit_ = Unit::Sigmoid;
    Reconstruction reconstruction_ = Reconstruction::SquaredError;
};

class Autoencoder : public Module {
public:
    Autoencoder(const AutoencoderOptions& options, ag::Generator& gen);
    Autoencoder(int64_t in, int64_t hidden, ag::Generator& gen) : Autoencoder(AutoencoderOptions(in, hidden), gen) {}
    Tensor encode(const Tensor& x) const { return squash(enc->forward(x)); }  // z = h(W x + b)
    Tensor decode(const Tensor& z) const;                                     // x'
    Tensor reconstruct(const Tensor& x) const { return decode(encode(x)); }
    Tensor loss(const Tensor& x) const;  // the reconstruction error of x, a mean per element

    const AutoencoderOptions options;
    std::shared_ptr<Linear> enc, dec;

private:
    Tensor squash(const Tensor& a) const { return options.unit() == Unit::Tanh ? ag::tanh(a) : ag::sigmoid(a); }
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
