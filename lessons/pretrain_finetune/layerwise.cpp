#include "lessons/pretrain_finetune/layerwise.h"

#include <algorithm>
#include <functional>
#include <stdexcept>

#include <fmt/format.h>

#include "data/shuffle.h"
#include "nn/optim.h"

namespace lessons::pretrain_finetune {
namespace {

constexpr int64_t kDigits = 10;

ag::Tensor index_tensor(const std::vector<int64_t>& rows) {
    return ag::Tensor::from({static_cast<int64_t>(rows.size())}, std::vector<double>(rows.begin(), rows.end()));
}

ag::Tensor label_tensor(const std::vector<int>& labels) {
    return ag::Tensor::from({static_cast<int64_t>(labels.size())}, std::vector<double>(labels.begin(), labels.end()));
}

// PyTorch's Adam: AdamW without weight decay.
optim::AdamW adam(std::vector<ag::Tensor> params, double lr) { return {std::move(params), lr, 0.9, 0.999, 1e-8, 0.0}; }

// settings.steps steps of mini-batch Adam over n examples, each epoch in a
// new order from `order`; batch_loss(rows) is the loss of those examples.
// Returns every step's loss.
std::vector<double> train_steps(std::vector<ag::Tensor> params, int64_t n, const MinibatchSettings& settings,
                                ag::Generator& order, const std::function<ag::Tensor(const ag::Tensor&)>& batch_loss) {
    optim::AdamW opt = adam(std::move(params), settings.lr);
    std::vector<double> losses;
    std::vector<int64_t> perm;
    for (int64_t step = 0, start = n; step < settings.steps; ++step, start += settings.batch_size) {
        if (start >= n) {  // a new epoch
            perm = farm::permutation(n, order);
            start = 0;
        }
        const auto first = perm.begin() + start;
        const std::vector<int64_t> rows(first, first + std::min(settings.batch_size, n - start));
        const ag::Tensor loss = batch_loss(index_tensor(rows));
        opt.zero_grad();
        loss.backward();
        opt.step();
        losses.push_back(loss.item());
    }
    return losses;
}

// The mean of each epoch's steps (an epoch: ceil(n / batch) steps).
std::vector<double> per_epoch(const std::vector<double>& losses, int64_t n, int64_t batch_size) {
    const auto per = static_cast<size_t>((n + batch_size - 1) / batch_size);
    std::vector<double> means;
    for (size_t s = 0; s < losses.size(); s += per) {
        const size_t e = std::min(losses.size(), s + per);
        double sum = 0;
        for (size_t i = s; i < e; ++i) sum += losses[i];
        means.push_back(sum / static_cast<double>(e - s));
    }
    return means;
}

std::vector<ag::Tensor> parameters_of(const nn::Module& a, const nn::Module& b) {
    std::vector<ag::Tensor> params = a.parameters();
    for (const ag::Tensor& p : b.parameters()) params.push_back(p);
    return params;
}

}  // namespace

DigitNet::DigitNet(const std::vector<int64_t>& widths, uint64_t seed) : gen(seed) {
    if (widths.size() < 2) throw std::invalid_argument("DigitNet: needs the input width and at least one layer");
    for (size_t l = 1; l < widths.size(); ++l)
        layers.push_back(std::make_shared<nn::Autoencoder>(
            nn::AutoencoderOptions(widths[l - 1], widths[l])
                .unit(nn::Unit::Tanh)
                .reconstruction(l == 1 ? nn::Reconstruction::PixelCrossEntropy : nn::Reconstruction::SquaredError),
            gen));
    head = std::make_shared<nn::ClassifierHead>(widths.back(), kDigits, gen);
}

ag::Tensor DigitNet::codes(const ag::Tensor& x, size_t n_layers) const {
    ag::Tensor h = x;
    for (size_t l = 0; l < n_layers; ++l) h = layers[l]->encode(h);
    return h;
}

ag::Tensor DigitNet::logits(const ag::Tensor& x) const { return head->forward(codes(x, layers.size())); }

ag::Tensor DigitNet::reconstruct(const ag::Tensor& x, size_t n_layers) const {
    ag::Tensor h = codes(x, n_layers);
    for (size_t l = n_layers; l-- > 0;) h = layers[l]->decode(h);
    return h;
}

std::vector<ag::Tensor> DigitNet::classifier_parameters() const {
    std::vector<ag::Tensor> params;
    for (const auto& layer : layers)
        for (const ag::Tensor& p : layer->enc->parameters()) params.push_back(p);
    for (const ag::Tensor& p : head->parameters()) params.push_back(p);
    return params;
}

std::vector<std::vector<double>> pretrain_autoencoders(DigitNet& net, const ag::Tensor& images,
                                                       const MinibatchSettings& settings, ag::Generator& order) {
    std::vector<std::vector<double>> curves;
    for (size_t l = 0; l < net.layers.size(); ++l) {
        ag::Tensor input;  // the fixed codes of the layers below: x itself for layer 1
        {
            ag::NoGradGuard fixed;
            input = net.codes(images, l);
        }
        const nn::Autoencoder& layer = *net.layers[l];
        const auto losses =
            train_steps(layer.parameters(), input.size(0), settings, order, [&](const ag::Tensor& rows) {
                return layer.loss(ag::index_select(input, 0, rows));  // the reconstruction error of these rows
            });
        curves.push_back(per_epoch(losses, input.size(0), settings.batch_size));
    }
    return curves;
}

std::vector<std::vector<double>> pretrain_supervised(DigitNet& net, const LabelledImages& data,
                                                     const MinibatchSettings& settings, ag::Generator& order) {
    const ag::Tensor labels = label_tensor(data.labels);
    std::vector<std::vector<double>> curves;
    for (size_t l = 0; l < net.layers.size(); ++l) {
        ag::Tensor input;
        {
            ag::NoGradGuard fixed;
            input = net.codes(data.images, l);
        }
        const nn::Linear& encoder = *net.layers[l]->enc;
        const nn::ClassifierHead temporary(encoder.weight.size(0), kDigits, net.gen);
        const auto losses =
            train_steps(parameters_of(encoder, temporary), input.size(0), settings, order, [&](const ag::Tensor& rows) {
                const ag::Tensor z = net.layers[l]->encode(ag::index_select(input, 0, rows));
                return ag::cross_entropy(temporary.forward(z), ag::index_select(labels, 0, rows));
            });
        curves.push_back(per_epoch(losses, input.size(0), settings.batch_size));
    }
    return curves;
}

std::vector<double> finetune(DigitNet& net, const LabelledImages& data, const MinibatchSettings& settings,
                             ag::Generator& order) {
    const ag::Tensor labels = label_tensor(data.labels);
    return train_steps(net.classifier_parameters(), data.images.size(0), settings, order, [&](const ag::Tensor& rows) {
        return ag::cross_entropy(net.logits(ag::index_select(data.images, 0, rows)), ag::index_select(labels, 0, rows));
    });
}

double test_error(const DigitNet& net, const LabelledImages& data) {
    ag::NoGradGuard no_grad;
    const std::vector<double> logits = net.logits(data.images).to_vector();
    int64_t wrong = 0;
    for (size_t i = 0; i < data.labels.size(); ++i) {
        const double* row = logits.data() + i * kDigits;
        const auto best = std::max_element(row, row + kDigits) - row;  // the first largest logit
        wrong += best != data.labels[i];
    }
    return static_cast<double>(wrong) / static_cast<double>(data.labels.size());
}

LabelledImages select(const LabelledImages& data, const std::vector<int64_t>& rows) {
    LabelledImages out;
    out.images = ag::index_select(data.images, 0, index_tensor(rows)).detach();
    for (int64_t r : rows) out.labels.push_back(data.labels[static_cast<size_t>(r)]);
    return out;
}

}  // namespace lessons::pretrain_finetune
