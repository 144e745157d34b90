// Part 1, §2.3-2.4: greedy layer-wise pre-training on handwritten digits (and §2.5 stated).
#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/ranges.h>

#include "lessons/common/progress.h"
#include "lessons/common/spread.h"
#include "lessons/common/svg.h"
#include "lessons/pretrain_finetune/digits_comparison.h"
#include "lessons/pretrain_finetune/parts.h"

namespace lessons::pretrain_finetune {
namespace {

constexpr size_t kShownDigits = 6;      // test images drawn with their reconstructions
constexpr int64_t kShownFeatures = 36;  // first-layer units drawn as images

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

// A row of `side`² pixels as side rows of side.
std::vector<std::vector<double>> as_square(const std::vector<double>& image, int64_t side) {
    std::vector<std::vector<double>> square;
    for (int64_t y = 0; y < side; ++y) square.emplace_back(image.begin() + side * y, image.begin() + side * (y + 1));
    return square;
}

// The passes that `m` makes over `images` images: "3 epochs", "1 epoch", "2.5 epochs".
std::string epochs_of(const MinibatchSettings& m, int64_t images) {
    const double epochs = static_cast<double>(m.steps * m.batch_size) / static_cast<double>(images);
    return fmt::format("{} {}", Cell(epochs).str(), epochs == 1 ? "epoch" : "epochs");
}

std::string minibatches(const MinibatchSettings& m) {
    return fmt::format("{} steps in batches of {}, Adam lr {}", m.steps, m.batch_size, m.lr);
}

void describe(Report& r, const DigitsSetup& setup, const DigitsData& data, int seeds) {
    r.paragraph(
        "The slides show Bengio et al. (2006) on MNIST: four ways to train a classifier, each fine-tuned on labelled "
        "data at the end. Here on {} real MNIST digits ({}x{} grey levels scaled to [0, 1]); the lecture gives no "
        "sizes for this experiment, so these are ours:",
        group_thousands(static_cast<double>(data.loaded)), data.side, data.side);
    const int64_t unlabelled = data.train.images.size(0);
    r.table("setup", {"what", "ours"},
            {{"test images (held out)", std::to_string(data.test.images.size(0))},
             {"unlabelled training images (autoencoders)", std::to_string(unlabelled)},
             {"labelled images per seed (of those, class-balanced)", std::to_string(setup.labelled)},
             {"shallow net", widths_str(setup.shallow_widths) + "-10"},
             {"deep net", widths_str(setup.deep_widths) + "-10"},
             {"unit h(·)", "tanh"},
             {"autoencoder pre-training, per layer",
              fmt::format("{} ({} over the unlabelled images)", minibatches(setup.autoencoder),
                          epochs_of(setup.autoencoder, unlabelled))},
             {"supervised pre-training, per layer", minibatches(setup.supervised) + ", on the labelled images"},
             {"fine-tuning (every method)", minibatches(setup.finetune) + ", the same batches for every method"}});
    r.paragraph(
        "§2.4 each autoencoder layer: $z = h(Wx + b)$ and an untied decoder $x' = h(W'z + b')$, trained to make the "
        "reconstruction $x'$ close to $x$. Layer 1 reconstructs the pixels as probabilities of ink, "
        "$x' = σ(W'z + b')$, scored by binary cross-entropy $L = -\\sum_i x_i \\log x'_i + (1 - x_i) \\log(1 - x'_i)$; "
        "the layers above reconstruct the tanh codes below them, $x' = \\mathrm{{tanh}}(W'z + b')$, scored by squared "
        "error "
        "$L = \\|x - x'\\|^2$. Every layer is narrower than its "
        "input, so it must compress. Layer l trains on the codes of layers 1 … l-1, which stay fixed (greedy). "
        "Supervised layer-wise pre-training trains layer l with a temporary softmax head on the labels instead. A "
        "seed (0 … {}) draws the initialisation, which {} images carry labels, and both batch orders.",
        seeds - 1, setup.labelled);
}

// "deep, autoencoder layer-wise 0.112"
std::string mean_of(DigitMethod m, const Spread& error) { return fmt::format("{} {:.3f}", name(m), error.mean); }

// A claim's evidence: each method's test error seed by seed.
Table per_seed_errors(const std::vector<DigitMethod>& methods, const std::map<DigitMethod, Spread>& errors, int seeds) {
    Table t{"", {"seed"}, {}};
    for (DigitMethod m : methods) t.columns.push_back(name(m));
    for (int seed = 0; seed < seeds; ++seed) {
        std::vector<Cell> row{seed};
        for (DigitMethod m : methods) row.emplace_back(errors.at(m).at(static_cast<size_t>(seed)));
        t.rows.push_back(row);
    }
    return t;
}

// The verdict of "`ours` has a lower test error than `other`", tested seed
// by seed: the two means and in how many seeds it holds.
std::string lower_error_verdict(const std::string& tested, double ours, double other, const SeedOrder& order) {
    return fmt::format("Tested {}: mean test error {:.3f} against {:.3f}, lower in {} of {}: {}.", tested, ours, other,
                       order.holding, count_of(order.seeds, "seed"),
                       order.clear() ? "as the lecture finds, reproduced" : "not reproduced");
}

// Why a finding of Bengio et al. may not carry over to this experiment.
std::string why_not(int64_t unlabelled, bool quick) {
    std::string why = fmt::format(
        "Bengio et al. pre-trained on all 60,000 MNIST training images for many epochs; here {} images for a few "
        "epochs per layer, and a fine-tuning budget that may let the net from scratch catch up",
        group_thousands(static_cast<double>(unlabelled)));
    if (quick) why += " (--quick: a small subset and a few steps, numbers that only show the part runs)";
    return why;
}

// The slides' finding "pre-training `method` beats the deep net from
// scratch": a lower test error on the means and in every seed (SeedOrder).
Claim beats_scratch(std::string key, std::string statement, DigitMethod method,
                    const std::map<DigitMethod, Spread>& errors, int seeds, const std::string& why) {
    const Spread& ours = errors.at(method);
    const Spread& scratch = errors.at(DigitMethod::DeepScratch);
    const SeedOrder order =
        seed_order(ours.mean < scratch.mean, seeds, [&](size_t i) { return ours.at(i) < scratch.at(i); });
    std::string reason = fmt::format("{}: {} against {}", order.str(), mean_of(method, ours),
                                     mean_of(DigitMethod::DeepScratch, scratch));
    if (!order.clear()) reason += "; " + why;
    return {std::move(key),
            std::move(statement),
            "",
            ours.mean,
            order.clear(),
            reason,
            ClaimKind::experiment,
            lower_error_verdict(name(method) + " against " + name(DigitMethod::DeepScratch), ours.mean, scratch.mean,
                                order),
            per_seed_errors({method, DigitMethod::DeepScratch}, errors, seeds)};
}

// §2.4 greedy: the layers train one after another, each on the fixed codes
// of the ones below, so the x axis runs through the layers in turn.
void plot_pretraining(Report& r, const Options& options, const DigitsRun& run) {
    svg::LinePlot plot{"Autoencoder pre-training (seed 0), the layers one after another", "epoch of pre-training",
                       "mean reconstruction loss"};
    plot.log_y = true;
    plot.markers = true;
    std::vector<std::string> falls;
    double epoch = 0;
    for (size_t l = 0; l < run.pretrain_curves.size(); ++l) {
        const std::vector<double>& curve = run.pretrain_curves[l];
        std::vector<double> epochs;
        for (size_t e = 0; e < curve.size(); ++e) epochs.push_back(++epoch);
        plot.series.push_back(
            {fmt::format("layer {} ({})", l + 1, l == 0 ? "cross-entropy" : "squared error"), epochs, curve});
        falls.push_back(curve.size() > 1
                            ? fmt::format("layer {} from {:.3f} to {:.3f}", l + 1, curve.front(), curve.back())
                            : fmt::format("layer {} {:.3f}", l + 1, curve.front()));
    }
    svg::write(output_path(options, "01_mnist_pretraining_loss.svg"), plot);
    const size_t epochs = run.pretrain_curves.front().size();
    r.figure("01_mnist_pretraining_loss.svg",
             fmt::format("Greedy: each layer trains alone for {}, on the fixed codes of the layers below, then the "
                         "next one starts; {}: {}. Layer 1's loss is in other units than the layers above: read each "
                         "line's own slope, not the heights of two lines.",
                         count_of(static_cast<int64_t>(epochs), "epoch"),
                         epochs > 1 ? "the mean loss of its epochs" : "the mean loss of its one epoch",
                         fmt::format("{}", fmt::join(falls, ", "))));
}

// §2.3's comparison as the slides draw it: each method's test error, the
// mean over the seeds as the dot and the lowest and highest seed as its bar.
void plot_test_errors(Report& r, const Options& options, const std::map<DigitMethod, Spread>& errors, int seeds,
                      int64_t test_images) {
    svg::LinePlot plot{
        fmt::format("MNIST test error ({} held-out digits), {}", group_thousands(static_cast<double>(test_images)),
                    seeds > 1 ? fmt::format("mean over {} seeds", seeds) : std::string("one seed")),
        "method", "test error"};
    plot.lines = false;
    svg::Series dots{seeds > 1 ? "mean over the seeds; bar: the lowest to the highest seed" : "one seed", {}, {}};
    for (DigitMethod m : digit_methods()) {
        dots.x.push_back(static_cast<double>(plot.x_categories.size()));
        plot.x_categories.push_back(name(m));
        dots.y.push_back(errors.at(m).mean);
        dots.low.push_back(errors.at(m).min);
        dots.high.push_back(errors.at(m).max);
    }
    plot.series.push_back(std::move(dots));
    svg::write(output_path(options, "01_mnist_test_error.svg"), plot);
    DigitMethod best = DigitMethod::Shallow;
    for (DigitMethod m : digit_methods())
        if (errors.at(m).mean < errors.at(best).mean) best = m;
    // "0.153 (seeds 0.150-0.156)"
    const auto error_of = [&](DigitMethod m) {
        const Spread& e = errors.at(m);
        return seeds > 1 ? fmt::format("{:.3f} (seeds {:.3f}-{:.3f})", e.mean, e.min, e.max)
                         : fmt::format("{:.3f}", e.mean);
    };
    r.figure("01_mnist_test_error.svg",
             fmt::format("Lower is better; the lowest dot: {}. Autoencoder pre-training gives the deep net a test "
                         "error of {} against {} from scratch; the claims below compare the methods seed by seed.",
                         name(best), error_of(DigitMethod::DeepAutoencoder), error_of(DigitMethod::DeepScratch)));
}

// Mean test error per method, over the seeds, as a table and a figure.
// `why`: why a finding may not reproduce here.
std::map<DigitMethod, Spread> report_errors(Report& r, const Options& options, const std::vector<DigitsRun>& runs,
                                            int64_t test_images, const std::string& why) {
    const int seeds = options.seeds;
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
    plot_test_errors(r, options, spreads, seeds, test_images);

    const double shallow = spreads[DigitMethod::Shallow].mean, scratch = spreads[DigitMethod::DeepScratch].mean;
    const double supervised = spreads[DigitMethod::DeepSupervised].mean;
    const double autoencoder = spreads[DigitMethod::DeepAutoencoder].mean;
    r.paragraph(
        "Lecture (Bengio et al. 2006, MNIST): the deep net with unsupervised pre-training has the lowest error, and "
        "pre-training either way beats the same deep net trained from scratch. Ours: a finding holds when it holds "
        "on the means and in each seed taken one by one (every method runs on the same seeds):");
    r.claim(beats_scratch("autoencoder_pretraining_beats_deep_from_scratch",
                          "Unsupervised (autoencoder) layer-wise pre-training, then fine-tuning, gives the deep net a "
                          "lower test error than training it from scratch",
                          DigitMethod::DeepAutoencoder, spreads, seeds, why));
    r.claim(beats_scratch("supervised_pretraining_beats_deep_from_scratch",
                          "Supervised layer-wise pre-training, then fine-tuning, gives the deep net a lower test error "
                          "than training it from scratch",
                          DigitMethod::DeepSupervised, spreads, seeds, why));
    // The best of the other three (the runner-up when the autoencoder's is lowest).
    DigitMethod best = DigitMethod::Shallow;
    for (DigitMethod m : digit_methods())
        if (m != DigitMethod::DeepAutoencoder && spreads.at(m).mean < spreads.at(best).mean) best = m;
    const Spread& ours = spreads.at(DigitMethod::DeepAutoencoder);
    const auto lowest_in = [&](size_t i) {
        for (DigitMethod m : digit_methods())
            if (m != DigitMethod::DeepAutoencoder && spreads.at(m).at(i) <= ours.at(i)) return false;
        return true;
    };
    const SeedOrder order =
        seed_order(autoencoder < shallow && autoencoder < scratch && autoencoder < supervised, seeds, lowest_in);
    std::string reason = fmt::format("{}: {} against the lowest of the other three, {}", order.str(),
                                     mean_of(DigitMethod::DeepAutoencoder, ours), mean_of(best, spreads.at(best)));
    if (!order.clear()) reason += "; " + why;
    r.claim({"autoencoder_pretraining_lowest_of_four",
             "Of the four methods, the deep net with unsupervised (autoencoder) layer-wise pre-training has the "
             "lowest test error",
             "", autoencoder, order.clear(), reason, ClaimKind::experiment,
             lower_error_verdict("autoencoder pre-training against the best other method, " + name(best), autoencoder,
                                 spreads.at(best).mean, order),
             per_seed_errors(digit_methods(), spreads, seeds)});
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

// One row of the reconstructions figure: a caption and its images.
struct ImageRow {
    std::string caption;
    std::vector<std::vector<double>> images;
};

// The autoencoders of seed 0 after pre-training, before fine-tuning.
void report_reconstructions(Report& r, const Options& options, const DigitsSetup& setup, const DigitsData& data,
                            const DigitsRun& run) {
    const size_t shown = std::min<size_t>(kShownDigits, static_cast<size_t>(data.test.images.size(0)));
    std::vector<std::string> titles;
    ImageRow originals{"test image", {}};
    for (size_t i = 0; i < shown; ++i) {
        titles.push_back(fmt::format("digit {}", data.test.labels[i]));
        originals.images.push_back(image_row(data.test.images, i));
    }
    std::vector<ImageRow> art{originals};
    std::vector<std::vector<Cell>> rows;
    for (size_t n = 1; n <= run.reconstructions.size(); ++n) {
        const int64_t code = setup.deep_widths[n];
        ImageRow row{fmt::format("{} ({} units)", count_of(static_cast<int64_t>(n), "layer"), code), {}};
        for (size_t i = 0; i < shown; ++i) row.images.push_back(image_row(run.reconstructions[n - 1], i));
        art.push_back(row);
        rows.push_back({n, code, run.pretrain_curves[n - 1].back(), run.reconstruction_mse[n - 1]});
    }
    r.paragraph(
        "Pre-trained autoencoders (seed 0, before fine-tuning): the first {} test images, and what comes back through "
        "n encoders and their decoders, "
        "$\\mathrm{{dec}}_1(\\ldots \\mathrm{{dec}}_n(\\mathrm{{enc}}_n(\\ldots \\mathrm{{enc}}_1(x))))$:",
        shown);
    svg::HeatmapGrid grid{fmt::format("Test digits (top row) and their reconstructions through 1 … {} pre-trained "
                                      "autoencoder layers (seed 0)",
                                      run.reconstructions.size()),
                          static_cast<int>(shown)};
    // a row of panels per depth, named once above it, so that each panel's
    // caption (the digit) stays short enough to read at the panels' width
    for (const ImageRow& row : art) {
        grid.row_titles.push_back(row.caption);
        for (size_t i = 0; i < shown; ++i)
            grid.panels.push_back({titles[i], as_square(row.images[i], data.side), 0.0, 1.0});
    }
    svg::write(output_path(options, "01_mnist_reconstructions.svg"), grid);
    std::vector<std::string> codes, errors;
    for (size_t n = 1; n <= run.reconstructions.size(); ++n) {
        codes.push_back(std::to_string(setup.deep_widths[n]));
        errors.push_back(fmt::format("{:.4f}", run.reconstruction_mse[n - 1]));
    }
    r.figure("01_mnist_reconstructions.svg",
             fmt::format("Each row down goes through one more encoder and back, to a code of {} units: the test "
                         "digits come back with a mean squared error per pixel of {}; look for the strokes that "
                         "the narrowest code keeps.",
                         fmt::join(codes, ", then "), fmt::join(errors, ", ")));
    r.table("reconstruction", {"layers n", "code units", "train loss (last epoch)", "test MSE per pixel"}, rows);
    r.paragraph(
        "The train loss of layer 1 is its binary cross-entropy per pixel, of the layers above their squared error on "
        "the codes; the test MSE is always on the pixels, after the way back through every decoder.");
    r.value("reconstruction_mse_layer1", run.reconstruction_mse.front());
}

// "What did we observe?": the first layer's units as images, W's row j
// drawn 28x28, each on its own symmetric range (dark: positive weight,
// white: negative).
void report_features(Report& r, const Options& options, const DigitsSetup& setup, const DigitsData& data,
                     const DigitsRun& run) {
    const ag::Tensor& w = run.first_layer_features;
    const int64_t shown = std::min(kShownFeatures, w.size(0));
    svg::HeatmapGrid grid{fmt::format("The first {} of the {} units of layer 1 after autoencoder pre-training "
                                      "(seed 0): each unit's weights on the {}x{} pixels",
                                      shown, w.size(0), data.side, data.side),
                          6};
    for (int64_t j = 0; j < shown; ++j) {
        const std::vector<double> row = image_row(w, static_cast<size_t>(j));
        double largest = 0;
        for (double v : row) largest = std::max(largest, std::abs(v));
        grid.panels.push_back({fmt::format("unit {}", j + 1), as_square(row, data.side), -largest, largest});
    }
    svg::write(output_path(options, "01_mnist_features.svg"), grid);
    r.paragraph(
        "What did the first layer learn? Each unit's weights drawn as an image, each unit on its own scale: dark blue "
        "is its largest positive weight, white its most negative, the middle blue 0. Look "
        "for units that became stroke or blob detectors in the middle of the frame, and for units that still look "
        "much like their random initialisation after {}. The speckled rim is the {} pixels that are blank in "
        "every training "
        "image: an input that is always 0 gives its weight a gradient of 0, so those weights keep their initial "
        "draws.",
        epochs_of(setup.autoencoder, data.train.images.size(0)), data.blank_pixels);
    r.value("blank_pixels", static_cast<double>(data.blank_pixels));
    r.figure("01_mnist_features.svg",
             fmt::format("The first {} units of layer 1, each unit's {} weights as a {}x{} image: look for strokes "
                         "and blobs in the middle of the frame, and the speckled rim of the {} always-blank pixels "
                         "whose weights kept their random draws.",
                         shown, w.size(1), data.side, data.side, data.blank_pixels));
}

}  // namespace

void part1_layerwise_digits(Report& r, const Options& options) {
    const int64_t labels = options.flag("labels");
    const DigitsSetup setup = options.quick ? DigitsSetup::quick(labels) : DigitsSetup::full(labels);
    const DigitsData data = load_digits_data(setup);
    describe(r, setup, data, options.seeds);
    const std::vector<DigitsRun> runs = compare_digit_methods(setup, data, options.seeds);
    r.value("runs", static_cast<double>(runs.size()));
    r.value("labelled_images", static_cast<double>(setup.labelled));
    r.value("unlabelled_images", static_cast<double>(data.train.images.size(0)));
    const auto errors =
        report_errors(r, options, runs, data.test.images.size(0), why_not(data.train.images.size(0), options.quick));
    for (const DigitsRun& run : runs)
        if (run.method == DigitMethod::DeepAutoencoder && run.seed == 0) {
            plot_pretraining(r, options, run);
            report_reconstructions(r, options, setup, data, run);
            report_features(r, options, setup, data, run);
        }
    // §2.5: the supervised pre-training of today, which this part does not run.
    r.paragraph(
        "§2.5, supervised pre-training as vision does it today, is another thing: one training run on a very large "
        "labelled dataset, then fine-tuning on the task; the Vision Transformer owes much of its success to a larger "
        "pre-training set (lecture 5 measures that). This part does not run it. Its supervised layer-wise variant "
        "(§2.3) uses labels, but only the same {} labelled images it is fine-tuned on, one layer at a time: the "
        "nearest analogue here, without the large labelled set that defines §2.5.",
        setup.labelled);
    const bool helped = errors.at(DigitMethod::DeepAutoencoder).mean < errors.at(DigitMethod::DeepScratch).mean;
    r.takeaway(fmt::format("test error with {} labels: {}; {}", setup.labelled, ranking(errors),
                           helped ? "pre-training the deep net's layers one at a time, the autoencoders without "
                                    "any label, beat training the same net from scratch."
                                  : "here pre-training did not help the deep net (see the claims above)."));
}

}  // namespace lessons::pretrain_finetune
