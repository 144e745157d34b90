// Part 1, §2.3-2.5: greedy layer-wise pre-training on handwritten digits.
#include <algorithm>
#include <map>

#include "lessons/common/progress.h"
#include "lessons/common/svg.h"
#include "lessons/pretrain_finetune/digit_art.h"
#include "lessons/pretrain_finetune/digits_comparison.h"
#include "lessons/pretrain_finetune/parts.h"
#include "lessons/pretrain_finetune/spread.h"

namespace lessons::pretrain_finetune {
namespace {

constexpr size_t kShownDigits = 4;  // test images drawn with their reconstructions

std::string key(DigitMethod m) {
    switch (m) {
        case DigitMethod::Shallow:
            return "shallow";
        case DigitMethod::DeepScratch:
            return "deep_scratch";
        case DigitMethod::DeepSupervised:
            return "deep_supervised";
        case DigitMethod::DeepAutoencoder:
            return "deep_autoencoder";
    }
    return "";
}

std::string widths_str(const std::vector<int64_t>& widths) { return fmt::format("{}", fmt::join(widths, "-")); }

std::vector<double> image_row(const ag::Tensor& images, size_t row) {
    const int64_t d = images.size(1);
    const std::vector<double> all = images.to_vector();
    return {all.begin() + static_cast<int64_t>(row) * d, all.begin() + static_cast<int64_t>(row + 1) * d};
}

std::vector<std::vector<double>> as_square(const std::vector<double>& image) {
    std::vector<std::vector<double>> square;
    for (size_t y = 0; y < 8; ++y)
        square.emplace_back(image.begin() + static_cast<int64_t>(8 * y),
                            image.begin() + static_cast<int64_t>(8 * y + 8));
    return square;
}

void describe(Report& r, const DigitsSetup& setup, const DigitsData& data, int seeds) {
    r.text("The slides show Bengio et al. (2006) on MNIST: four ways to train a classifier, each fine-tuned on");
    r.text("labelled data at the end. Here on the UCI handwritten digits ({} images of 8x8 pixels, 0-16",
           group_thousands(static_cast<double>(data.loaded)));
    r.text("scaled to [0, 1]); the lecture gives no sizes for this experiment, so these are ours:");
    r.table("setup", {"what", "ours"},
            {{"test images (held out)", std::to_string(data.test.images.size(0))},
             {"unlabelled training images (autoencoders)", std::to_string(data.train.images.size(0))},
             {"labelled training images (per seed)", std::to_string(setup.labelled)},
             {"shallow net", widths_str(setup.shallow_widths) + "-10"},
             {"deep net", widths_str(setup.deep_widths) + "-10"},
             {"unit h(·)", "sigmoid"},
             {"autoencoder pre-training",
              fmt::format("{} epochs/layer, batches of {}, Adam lr {}", setup.autoencoder.epochs,
                          setup.autoencoder.batch_size, setup.autoencoder.lr)},
             {"supervised pre-training",
              fmt::format("{} epochs/layer on the labelled images, batches of {}, "
                          "Adam lr {}",
                          setup.supervised.epochs, setup.supervised.batch_size, setup.supervised.lr)},
             {"fine-tuning (every method)",
              fmt::format("{} full-batch Adam steps, lr {}", setup.finetune_steps, setup.finetune_lr)}});
    r.text("§2.4 each autoencoder layer: z = h(W x + b), x' = h(W' z + b'), loss = mean squared error; every");
    r.text("layer is narrower than its input, so it must compress. Layer l trains on the codes of layers");
    r.text("1 … l-1, which stay fixed (greedy). Supervised layer-wise pre-training trains layer l with a");
    r.text("temporary linear head on the labels instead. A seed (0 … {}) draws the initialisation, which {}", seeds - 1,
           setup.labelled);
    r.text("images carry labels, and the batch order.");
}

// Mean test error per method, over the seeds.
std::map<DigitMethod, Spread> report_errors(Report& r, const std::vector<DigitsRun>& runs, int seeds,
                                            int64_t unlabelled) {
    std::map<DigitMethod, std::vector<double>> errors;
    for (const DigitsRun& run : runs) errors[run.method].push_back(run.test_error);
    std::map<DigitMethod, Spread> spreads;
    std::vector<std::vector<Cell>> rows, per_seed;
    for (DigitMethod m : digit_methods()) {
        spreads[m] = spread(errors[m]);
        rows.push_back({name(m), spreads[m].mean, spreads[m].min, spreads[m].max});
    }
    r.table("test_error", {"method", "test error (mean)", "min", "max"}, rows);
    for (int seed = 0; seed < seeds; ++seed) {
        std::vector<Cell> row{seed};
        for (DigitMethod m : digit_methods()) row.emplace_back(errors[m][static_cast<size_t>(seed)]);
        per_seed.push_back(row);
    }
    std::vector<std::string> columns{"seed"};
    for (DigitMethod m : digit_methods()) columns.push_back(name(m));
    r.table("test_error_per_seed", columns, per_seed);
    for (DigitMethod m : digit_methods()) r.value("error_" + key(m) + "_mean", spreads[m].mean);

    const double shallow = spreads[DigitMethod::Shallow].mean, scratch = spreads[DigitMethod::DeepScratch].mean;
    const double supervised = spreads[DigitMethod::DeepSupervised].mean;
    const double autoencoder = spreads[DigitMethod::DeepAutoencoder].mean;
    r.text("");
    r.text("Lecture (Bengio et al. 2006, MNIST): the deep net with unsupervised pre-training has the lowest error,");
    r.text("and pre-training either way beats the same deep net trained from scratch. Ours, on the means:");
    r.verdict("autoencoder_pretraining_beats_deep_from_scratch", autoencoder < scratch);
    r.verdict("supervised_pretraining_beats_deep_from_scratch", supervised < scratch);
    const bool lowest = autoencoder < shallow && autoencoder < scratch && autoencoder < supervised;
    r.verdict("autoencoder_pretraining_lowest_of_four", lowest);
    if (!lowest) {
        const auto best = std::min_element(spreads.begin(), spreads.end(),
                                           [](const auto& a, const auto& b) { return a.second.mean < b.second.mean; });
        r.text("Not as in the slides: the lowest mean error is the {}'s. Why it may differ: 8x8 digits (64",
               name(best->first));
        r.text("pixels) are a much easier input than MNIST's 28x28, so one hidden layer already separates them well;");
        r.text("and the autoencoders see only {} unlabelled images where MNIST has 60,000 training images.",
               group_thousands(static_cast<double>(unlabelled)));
    }
    return spreads;
}

// One line: the methods from the lowest mean error to the highest.
std::string ranking(const std::map<DigitMethod, Spread>& errors) {
    std::vector<DigitMethod> order = digit_methods();
    std::stable_sort(order.begin(), order.end(),
                     [&](DigitMethod a, DigitMethod b) { return errors.at(a).mean < errors.at(b).mean; });
    std::vector<std::string> items;
    for (DigitMethod m : order) items.push_back(fmt::format("{} {:.3f}", name(m), errors.at(m).mean));
    return fmt::format("{}", fmt::join(items, " < "));
}

// The autoencoders of seed 0 after pre-training, before fine-tuning.
void report_reconstructions(Report& r, const Options& options, const DigitsSetup& setup, const DigitsData& data,
                            const DigitsRun& run) {
    const size_t shown = std::min<size_t>(kShownDigits, static_cast<size_t>(data.test.images.size(0)));
    std::vector<std::string> titles;
    ArtRow originals{"test image", {}};
    for (size_t i = 0; i < shown; ++i) {
        titles.push_back(fmt::format("digit {}", data.test.labels[i]));
        originals.images.push_back(image_row(data.test.images, i));
    }
    std::vector<ArtRow> art{originals};
    std::vector<std::vector<Cell>> rows;
    for (size_t n = 1; n <= run.reconstructions.size(); ++n) {
        const int64_t code = setup.deep_widths[n];
        ArtRow row{fmt::format("{} layer{} ({} units)", n, n == 1 ? "" : "s", code), {}};
        for (size_t i = 0; i < shown; ++i) row.images.push_back(image_row(run.reconstructions[n - 1], i));
        art.push_back(row);
        rows.push_back({n, code, run.pretrain_curves[n - 1].back(), run.reconstruction_mse[n - 1]});
    }
    r.text("");
    r.text("Pre-trained autoencoders (seed 0, before fine-tuning): the first {} test images, and what comes back",
           shown);
    r.text("through n encoders and their decoders, dec_1(… dec_n(enc_n(… enc_1(x)))):");
    for (const std::string& line : digit_art(titles, art)) {
        const auto end = line.find_last_not_of(' ');
        r.text(end == std::string::npos ? "" : line.substr(0, end + 1));
    }
    r.table("reconstruction", {"layers n", "code units", "train loss (last epoch)", "test MSE per pixel"}, rows);
    r.value("reconstruction_mse_layer1", run.reconstruction_mse.front());

    svg::HeatmapGrid grid{fmt::format("Test digits (top row) and their reconstructions through 1 … {} pre-trained "
                                      "autoencoder layers (seed 0)",
                                      run.reconstructions.size()),
                          static_cast<int>(shown)};
    for (const ArtRow& row : art)
        for (size_t i = 0; i < shown; ++i)
            grid.panels.push_back({row.caption + ", " + titles[i], as_square(row.images[i]), 0.0, 1.0});
    const auto path = output_path(options, "01_digits_reconstructions.svg");
    svg::write(path, grid);
    r.text("figure: {}", path.string());
}

void plot_curves(Report& r, const Options& options, const std::vector<DigitsRun>& runs) {
    svg::LinePlot pretrain{"Autoencoder pre-training (seed 0), layer by layer", "epoch", "reconstruction MSE"};
    svg::LinePlot finetune{"Fine-tuning on the labelled images (seed 0)", "step", "cross-entropy"};
    pretrain.log_y = finetune.log_y = true;
    for (const DigitsRun& run : runs) {
        if (run.seed != 0) continue;
        std::vector<double> steps;
        for (size_t s = 0; s < run.finetune_losses.size(); ++s) steps.push_back(static_cast<double>(s + 1));
        finetune.series.push_back({name(run.method), steps, run.finetune_losses});
        if (run.method != DigitMethod::DeepAutoencoder) continue;
        for (size_t l = 0; l < run.pretrain_curves.size(); ++l) {
            std::vector<double> epochs;
            for (size_t e = 0; e < run.pretrain_curves[l].size(); ++e) epochs.push_back(static_cast<double>(e + 1));
            pretrain.series.push_back({fmt::format("layer {}", l + 1), epochs, run.pretrain_curves[l]});
        }
    }
    pretrain.markers = true;
    for (const auto& [file, plot] : {std::pair{"01_digits_pretraining_loss.svg", &pretrain},
                                     std::pair{"01_digits_finetuning_loss.svg", &finetune}}) {
        const auto path = output_path(options, file);
        svg::write(path, *plot);
        r.text("figure: {}", path.string());
    }
}

}  // namespace

void part1_layerwise_digits(Report& r, const Options& options) {
    const DigitsSetup setup = options.quick ? DigitsSetup::quick() : DigitsSetup::full();
    const DigitsData data = load_digits_data(setup);
    describe(r, setup, data, options.seeds);
    const std::vector<DigitsRun> runs = compare_digit_methods(setup, data, options.seeds);
    r.value("runs", static_cast<double>(runs.size()));
    r.value("labelled_images", static_cast<double>(setup.labelled));
    r.value("unlabelled_images", static_cast<double>(data.train.images.size(0)));
    const auto errors = report_errors(r, runs, options.seeds, data.train.images.size(0));
    for (const DigitsRun& run : runs)
        if (run.method == DigitMethod::DeepAutoencoder && run.seed == 0)
            report_reconstructions(r, options, setup, data, run);
    plot_curves(r, options, runs);
    const bool helped = errors.at(DigitMethod::DeepAutoencoder).mean < errors.at(DigitMethod::DeepScratch).mean;
    r.takeaway(fmt::format("test error with {} labels: {}; {}", setup.labelled, ranking(errors),
                           helped ? "pre-training the deep net's layers one at a time, the autoencoders without "
                                    "any label, beat training the same net from scratch."
                                  : "here pre-training did not help the deep net (see the verdicts above)."));
}

}  // namespace lessons::pretrain_finetune
