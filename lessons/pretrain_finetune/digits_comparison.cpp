#include "lessons/pretrain_finetune/digits_comparison.h"

#include <numeric>
#include <stdexcept>

#include <fmt/format.h>

#include "data/digits.h"
#include "data/shuffle.h"
#include "lessons/pretrain_finetune/independent_runs.h"

namespace lessons::pretrain_finetune {
namespace {

constexpr uint64_t kSplitSeed = 0;    // which images are held out for testing
constexpr uint64_t kOrderSeed = 200;  // + seed: the pre-training batch order

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
    ag::Generator order(kOrderSeed + s);

    if (method == DigitMethod::DeepSupervised)
        run.pretrain_curves = pretrain_supervised(net, labelled, setup.supervised, order);
    if (method == DigitMethod::DeepAutoencoder) {
        run.pretrain_curves = pretrain_autoencoders(net, data.train.images, setup.autoencoder, order);
        ag::NoGradGuard no_grad;
        for (size_t n = 1; n <= net.layers.size(); ++n) {
            run.reconstructions.push_back(net.reconstruct(data.test.images, n));
            run.reconstruction_mse.push_back(ag::mse_loss(run.reconstructions.back(), data.test.images).item());
        }
    }
    run.finetune_losses = finetune(net, labelled, setup.finetune_steps, setup.finetune_lr);
    run.test_error = test_error(net, data.test);
    return run;
}

// A rough relative cost (examples seen, times 2 for an autoencoder's decoder),
// to start the longest runs first.
int64_t cost(DigitMethod method, const DigitsSetup& setup) {
    const int64_t finetune = setup.finetune_steps * setup.labelled;
    switch (method) {
        case DigitMethod::Shallow:
            return finetune / 2;
        case DigitMethod::DeepScratch:
            return finetune;
        case DigitMethod::DeepSupervised:
            return finetune + setup.supervised.epochs * setup.labelled;
        case DigitMethod::DeepAutoencoder:
            return finetune + 2 * setup.autoencoder.epochs * setup.unlabelled;
    }
    return 0;
}

}  // namespace

DigitsSetup DigitsSetup::full() {
    DigitsSetup s;
    s.test_images = 500;
    s.unlabelled = 1297;  // every training image (1,797 - 500)
    s.labelled = 100;
    s.deep_widths = {64, 48, 32, 24};
    s.shallow_widths = {64, 48};
    s.autoencoder = {20, 32, 1e-2};
    s.supervised = {50, 16, 1e-2};
    s.finetune_steps = 300;
    s.finetune_lr = 1e-2;
    return s;
}

DigitsSetup DigitsSetup::quick() {
    DigitsSetup s = full();
    s.test_images = 200;
    s.unlabelled = 300;
    s.labelled = 50;
    s.autoencoder.epochs = 2;
    s.supervised.epochs = 5;
    s.finetune_steps = 20;
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
    const optdigits::Digits digits = optdigits::load_digits();
    const optdigits::DigitsSplit split = optdigits::split_digits(digits, setup.test_images, kSplitSeed);
    const LabelledImages train{split.train.images, split.train.labels};
    if (setup.unlabelled > train.images.size(0) || setup.labelled > setup.unlabelled)
        throw std::invalid_argument(fmt::format("digits: {} unlabelled and {} labelled of {} training images",
                                                setup.unlabelled, setup.labelled, train.images.size(0)));
    return {select(train, first_rows(setup.unlabelled)), {split.test.images, split.test.labels}, digits.images.size(0)};
}

std::vector<int64_t> labelled_rows(const DigitsSetup& setup, const DigitsData& data, int seed) {
    ag::Generator gen(kLabelSeed + static_cast<uint64_t>(seed));
    std::vector<int64_t> rows = farm::permutation(data.train.images.size(0), gen);
    rows.resize(static_cast<size_t>(setup.labelled));
    return rows;
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
