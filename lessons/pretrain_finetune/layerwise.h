#pragma once
// §2.3-2.4 greedy layer-wise pre-training on handwritten digits, the 2006
// recipe (Hinton & Salakhutdinov; Bengio et al.): a deep net of tanh layers
// h(W_L … h(W_1 x)) under a linear classifier, whose layers are first
// trained one at a time, then fine-tuned together on a few labels.
//
//   unsupervised (autoencoders): layer l is the encoder of an autoencoder
//     z = h(W x + b) with an untied decoder, trained to reconstruct its
//     input, the codes of layers 1 … l-1 (no labels needed). Layer 1
//     reconstructs pixels in [0, 1]: x' = σ(W' z + b') under binary
//     cross-entropy; the upper layers reconstruct tanh codes in (-1, 1):
//     x' = tanh(W' z + b') under squared error;
//   supervised: layer l and a temporary linear head are trained to
//     classify from those codes, then the head is thrown away.
// Layers below l stay fixed while l trains ("greedy").
#include <cstdint>
#include <memory>
#include <vector>

#include "autograd/generator.h"
#include "nn/autoencoder.h"

namespace lessons::pretrain_finetune {

// Images [N, pixels] scaled to [0, 1] and their digits.
struct LabelledImages {
    ag::Tensor images;
    std::vector<int> labels;
};

// The deep (or, with one width, shallow) classifier: layer widths
// widths[0] = the pixels, …, then a linear head to the 10 digits. Layer l is
// the encoder of an autoencoder widths[l-1] -> widths[l], its decoder used
// only while pre-training. Initialisation (PyTorch's default) from `seed`.
struct DigitNet {
    DigitNet(const std::vector<int64_t>& widths, uint64_t seed);

    ag::Tensor codes(const ag::Tensor& x, size_t n_layers) const;  // h(W_n … h(W_1 x)) of the first n layers
    ag::Tensor logits(const ag::Tensor& x) const;                  // head(codes of all layers) [N, 10]
    // Through the first n encoders and back through their decoders:
    // dec_1(… dec_n(enc_n(… enc_1(x)))), the input as layer n's code keeps it.
    ag::Tensor reconstruct(const ag::Tensor& x, size_t n_layers) const;
    std::vector<ag::Tensor> classifier_parameters() const;  // encoders and head, no decoders

    std::vector<std::shared_ptr<nn::Autoencoder>> layers;
    std::shared_ptr<nn::ClassifierHead> head;
    ag::Generator gen;  // draws the temporary heads of supervised pre-training
};

// Mini-batch Adam: `steps` steps of `batch_size` examples, the examples in
// a new random order each pass over the data (an epoch; the last batch of
// an epoch may be smaller).
struct MinibatchSettings {
    int64_t steps = 0, batch_size = 0;
    double lr = 0;
};

// Greedy layer-wise pre-training, each layer with `settings` (§2.4: "the
// same backpropagation as a two-layer network, x is input and target");
// `images` unlabelled, batch order drawn from `order`. Returns per layer
// the mean batch loss of every epoch.
std::vector<std::vector<double>> pretrain_autoencoders(DigitNet& net, const ag::Tensor& images,
                                                       const MinibatchSettings& settings, ag::Generator& order);
// The same with labels: per layer, the mean cross-entropy of every epoch.
std::vector<std::vector<double>> pretrain_supervised(DigitNet& net, const LabelledImages& data,
                                                     const MinibatchSettings& settings, ag::Generator& order);

// Fine-tuning: mini-batch Adam on every layer and the head, batches drawn
// from `order`; returns every step's cross-entropy.
std::vector<double> finetune(DigitNet& net, const LabelledImages& data, const MinibatchSettings& settings,
                             ag::Generator& order);

// Share of `data` whose digit does not get the largest logit.
double test_error(const DigitNet& net, const LabelledImages& data);

// Rows `rows` of `data`.
LabelledImages select(const LabelledImages& data, const std::vector<int64_t>& rows);

}  // namespace lessons::pretrain_finetune
