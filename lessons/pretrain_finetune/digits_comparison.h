#pragma once
// §2.3 the four ways to train a digit classifier that the slides compare
// (Bengio et al. 2006, on MNIST): a shallow net, and a deep net trained
// from scratch, after supervised layer-wise pre-training, or after
// unsupervised (autoencoder) layer-wise pre-training. Every one is then
// fine-tuned on the same few labelled images; here on the UCI 8x8 digits.
#include <cstdint>
#include <string>
#include <vector>

#include "lessons/pretrain_finetune/layerwise.h"

namespace lessons::pretrain_finetune {

struct DigitsSetup {
    int64_t test_images = 0;  // held out, split_digits(…, seed 0)
    int64_t unlabelled = 0;   // training images the autoencoders read (no labels)
    int64_t labelled = 0;     // training images with labels: supervised pre-training and fine-tuning
    std::vector<int64_t> deep_widths, shallow_widths;  // 64 pixels first
    PretrainSettings autoencoder, supervised;
    int64_t finetune_steps = 0;
    double finetune_lr = 0;

    static DigitsSetup full();
    static DigitsSetup quick();  // a tiny subset, a few epochs: seconds
};

enum class DigitMethod { Shallow, DeepScratch, DeepSupervised, DeepAutoencoder };
std::string name(DigitMethod m);
const std::vector<DigitMethod>& digit_methods();  // in the slides' order

struct DigitsData {
    LabelledImages train, test;  // train: the first `unlabelled` of the split's training images
    int64_t loaded = 0;          // images in the file
};
DigitsData load_digits_data(const DigitsSetup& setup);

// The labelled subset of seed s: setup.labelled training images, drawn
// with ag::Generator(kLabelSeed + s).
std::vector<int64_t> labelled_rows(const DigitsSetup& setup, const DigitsData& data, int seed);

struct DigitsRun {
    DigitMethod method;
    int seed = 0;
    double test_error = 0;
    std::vector<std::vector<double>> pretrain_curves;  // per layer, per epoch (pre-trained methods)
    std::vector<double> finetune_losses;               // per step
    // Autoencoder runs only, after pre-training (before fine-tuning): the
    // test images' reconstructions through the first n layers, n = 1 … L,
    // x' = dec_1(… dec_n(enc_n(… enc_1(x)))) [test, 64], and their MSE.
    std::vector<ag::Tensor> reconstructions;
    std::vector<double> reconstruction_mse;
};

// Every method × seed 0 … seeds-1 (run_independent: same numbers for any
// thread count); in the order method, then seed. A seed draws the nets'
// initialisation (the four nets of a seed start from the same draws where
// their shapes agree), the labelled subset and the batch order.
std::vector<DigitsRun> compare_digit_methods(const DigitsSetup& setup, const DigitsData& data, int seeds);

constexpr uint64_t kLabelSeed = 100;

}  // namespace lessons::pretrain_finetune
