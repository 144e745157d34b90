#include "lessons/pretrain_finetune/digits_comparison.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include <fmt/format.h>

#include "data/mnist.h"
#include "data/shuffle.h"
#include "lessons/common/cli.h"
#include "lessons/common/independent_runs.h"

namespace lessons::pretrain_finetune {
namespace {

constexpr uint64_t kSplitSeed = 0;            // which images are held out for testing
constexpr uint64_t kPretrainOrderSeed = 200;  // + seed: the pre-training batch order
constexpr uint64_t kFinetuneOrderSeed = 300;  // + seed: the fine-tuning batch order, one for all methods

std::vector<int64_t> first_rows(int64_t n) {
    std::vector<int64_t> rows(static_cast<size_t>(n));
    std::iota(rows.begin(), rows.end(), int64_t{0});
    return rows;
}

DigitsRun train_one(DigitMethod method, int seed, const DigitsSetup& setup, const DigitsData& data) {
    DigitsRun run;
    run.method = method;
    run.seed = seed;
    const auto s = static_cast<uint64_t>(seed);
    DigitNet net(method == DigitMethod::Shallow ? setup.shallow_widths : setup.deep_widths, s);
    const LabelledImages labelled = select(data.train, labelled_rows(setup, data, seed));
    ag::Generator pretrain_order(kPretrainOrderSeed + s);

    if (method == DigitMethod::DeepSupervised)
        run.pretrain_curves = pretrain_supervised(net, labelled, setup.supervised, pretrain_order);
    if (method == DigitMethod::DeepAutoencoder) {
        run.pretrain_curves = pretrain_autoencoders(net, data.train.images, setup.autoencoder, pretrain_order);
        ag::NoGradGuard no_grad;
        for (size_t n = 1; n <= net.layers.size(); ++n) {
            run.reconstructions.push_back(net.reconstruct(data.test.images, n));
            run.reconstruction_mse.push_back(ag::mse_loss(run.reconstructions.back(), data.test.images).item());
        }
        run.first_layer_features = net.layers[0]->enc->weight.detach().clone();
    }
    ag::Generator finetune_order(kFinetuneOrderSeed + s);
    run.finetune_losses = finetune(net, labelled, setup.finetune, finetune_order);
    run.test_error = test_error(net, data.test);
    return run;
}

// A rough relative cost (multiply-adds per example through the net's
// weights, times the examples its training steps see; an autoencoder's
// decoder doubles its layer), to start the longest runs first.
int64_t cost(DigitMethod method, const DigitsSetup& setup) {
    const auto& widths = method == DigitMethod::Shallow ? setup.shallow_widths : setup.deep_widths;
    int64_t net = 0;
    for (size_t l = 1; l < widths.size(); ++l) net += widths[l - 1] * widths[l];
    int64_t total = net * setup.finetune.steps * setup.finetune.batch_size;
    if (method == DigitMethod::DeepSupervised) total += net * setup.supervised.steps * setup.supervised.batch_size;
    if (method == DigitMethod::DeepAutoencoder)
        total += 2 * net * setup.autoencoder.steps * setup.autoencoder.batch_size;
    return total;
}

}  // namespace

DigitsSetup DigitsSetup::full(int64_t labelled) {
    DigitsSetup s;
    s.test_images = 2000;
    s.unlabelled = 8000;  // every other image
    s.labelled = labelled;
    s.deep_widths = {784, 256, 128, 64};
    s.shallow_widths = {784, 256};
    s.autoencoder = {3 * 8000 / 20, 20, 1e-3};  // 3 epochs over the 8,000 images per layer
    s.supervised = {100, 100, 1e-3};
    s.finetune = {300, 100, 1e-3};
    return s;
}

DigitsSetup DigitsSetup::quick(int64_t labelled) {
    DigitsSetup s = full(labelled);
    s.test_images = 500;
    s.unlabelled = 1000;
    s.autoencoder.steps = 1000 / 20;  // one epoch
    s.supervised.steps = 10;
    s.finetune.steps = 20;
    return s;
}

std::string name(DigitMethod m) {
    switch (m) {
        case DigitMethod::Shallow:
            return "shallow net";
        case DigitMethod::DeepScratch:
            return "deep, no pre-training";
        case DigitMethod::DeepSupervised:
            return "deep, supervised layer-wise";
        case DigitMethod::DeepAutoencoder:
            return "deep, autoencoder layer-wise";
    }
    return "";
}

const std::vector<DigitMethod>& digit_methods() {
    static const std::vector<DigitMethod> methods{DigitMethod::Shallow, DigitMethod::DeepScratch,
                                                  DigitMethod::DeepSupervised, DigitMethod::DeepAutoencoder};
    return methods;
}

DigitsData load_digits_data(const DigitsSetup& setup) {
    const mnist::Digits digits = mnist::load();
    const auto loaded = static_cast<int64_t>(digits.labels.size());
    if (setup.test_images + setup.unlabelled > loaded)
        throw std::invalid_argument(
            fmt::format("digits: {} test and {} unlabelled of {} images", setup.test_images, setup.unlabelled, loaded));
    const mnist::Split split = mnist::split(digits, setup.test_images, kSplitSeed);
    const LabelledImages train{split.train.images, split.train.labels};
    DigitsData data{
        select(train, first_rows(setup.unlabelled)), {split.test.images, split.test.labels}, loaded, digits.rows};
    const std::vector<double> ink = ag::sum(data.train.images, {0}).to_vector();
    data.blank_pixels = std::count(ink.begin(), ink.end(), 0.0);
    // --labels N asks the unlabelled images for N class-balanced ones: a
    // count they cannot give is the user's to change (exit 2), told before
    // any training rather than at the first seed's.
    try {
        labelled_rows(setup, data, 0);
    } catch (const std::invalid_argument& e) {
        throw UsageError(
            fmt::format("--labels {}: the {} unlabelled images hold too few of each digit for that many "
                        "class-balanced labels ({})",
                        setup.labelled, setup.unlabelled, e.what()));
    }
    return data;
}

std::vector<int64_t> labelled_rows(const DigitsSetup& setup, const DigitsData& data, int seed) {
    ag::Generator gen(kLabelSeed + static_cast<uint64_t>(seed));
    return mnist::balanced_rows(data.train.labels, setup.labelled, gen);
}

std::vector<DigitsRun> compare_digit_methods(const DigitsSetup& setup, const DigitsData& data, int seeds) {
    std::vector<std::pair<DigitMethod, int>> jobs;
    std::vector<int64_t> costs;
    for (DigitMethod m : digit_methods())
        for (int seed = 0; seed < seeds; ++seed) {
            jobs.emplace_back(m, seed);
            costs.push_back(cost(m, setup));
        }
    std::vector<DigitsRun> runs(jobs.size());
    run_independent(costs, [&](size_t i) { runs[i] = train_one(jobs[i].first, jobs[i].second, setup, data); });
    return runs;
}

}  // namespace lessons::pretrain_finetune
