#pragma once
// §2.3 the four ways to train a digit classifier that the slides compare
// (Bengio et al. 2006, on MNIST): a shallow net, and a deep net trained
// from scratch, after supervised layer-wise pre-training, or after
// unsupervised (autoencoder) layer-wise pre-training. Every one is then
// fine-tuned with the same budget and the same batch order on the same few
// labelled images. Here on 10,000 real MNIST digits (data/mnist.h).
#include <cstdint>
#include <string>
#include <vector>

#include "lessons/pretrain_finetune/layerwise.h"

namespace lessons::pretrain_finetune {

struct DigitsSetup {
    int64_t test_images = 0;  // held out, mnist::split(…, seed 0)
    int64_t unlabelled = 0;   // training images the autoencoders read (no labels)
    int64_t labelled = 0;     // of those, class-balanced, with labels: supervised pre-training and fine-tuning
    std::vector<int64_t> deep_widths, shallow_widths;     // the pixels first
    MinibatchSettings autoencoder, supervised, finetune;  // per layer for the pre-training

    static DigitsSetup full(int64_t labelled);   // the lesson's experiment
    static DigitsSetup quick(int64_t labelled);  // a small subset, a few steps: seconds
};

enum class DigitMethod { Shallow, DeepScratch, DeepSupervised, DeepAutoencoder };
std::string name(DigitMethod m);
const std::vector<DigitMethod>& digit_methods();  // in the slides' order

struct DigitsData {
    LabelledImages train, test;  // train: the first `unlabelled` of the split's training images
    int64_t loaded = 0;          // images in the files
    int64_t side = 0;            // pixels a side (28)
    int64_t blank_pixels = 0;    // pixels that are 0 in every training image (no gradient ever reaches their weights)
};
// Throws std::invalid_argument when the setup asks for more images than
// there are, lessons::UsageError when the unlabelled ones cannot give
// setup.labelled class-balanced labelled images (lesson 01's --labels).
DigitsData load_digits_data(const DigitsSetup& setup);

// The labelled subset of seed s: setup.labelled training images, as many
// of every digit as can be (mnist::balanced_rows), drawn with
// ag::Generator(kLabelSeed + s).
std::vector<int64_t> labelled_rows(const DigitsSetup& setup, const DigitsData& data, int seed);

struct DigitsRun {
    DigitMethod method;
    int seed = 0;
    double test_error = 0;
    std::vector<std::vector<double>> pretrain_curves;  // per layer, per epoch (pre-trained methods)
    std::vector<double> finetune_losses;               // per step
    // Autoencoder runs only, after pre-training (before fine-tuning): the
    // test images' reconstructions through the first n layers, n = 1 … L,
    // x' = dec_1(… dec_n(enc_n(… enc_1(x)))) [test, pixels], and their MSE
    // per pixel; and the first layer's weights W [units, pixels], one
    // learned feature per row.
    std::vector<ag::Tensor> reconstructions;
    std::vector<double> reconstruction_mse;
    ag::Tensor first_layer_features;
};

// Every method × seed 0 … seeds-1 (run_independent: same numbers for any
// thread count); in the order method, then seed. A seed draws the nets'
// initialisation (the four nets of a seed start from the same draws where
// their shapes agree), the labelled subset, the pre-training batch order
// and the fine-tuning batch order (the same for all four methods).
std::vector<DigitsRun> compare_digit_methods(const DigitsSetup& setup, const DigitsData& data, int seeds);

constexpr uint64_t kLabelSeed = 100;

}  // namespace lessons::pretrain_finetune
