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

// Mini-batch Adam over n examples for settings.epochs epochs, each epoch in
// a new order from `order`; batch_loss(rows) is the loss of those examples.
// Returns each epoch's mean batch loss.
std::vector<double> train_epochs(std::vector<ag::Tensor> params, int64_t n, const PretrainSettings& settings,
                                 ag::Generator& order, const std::function<ag::Tensor(const ag::Tensor&)>& batch_loss) {
    optim::AdamW opt = adam(std::move(params), settings.lr);
    std::vector<double> epoch_losses;
    for (int64_t e = 0; e < settings.epochs; ++e) {
        const std::vector<int64_t> perm = farm::permutation(n, order);
        double sum = 0;
        int64_t batches = 0;
        for (int64_t start = 0; start < n; start += settings.batch_size, ++batches) {
            const auto first = perm.begin() + start;
            const std::vector<int64_t> rows(first, first + std::min(settings.batch_size, n - start));
            const ag::Tensor loss = batch_loss(index_tensor(rows));
            opt.zero_grad();
            loss.backward();
            opt.step();
            sum += loss.item();
        }
        epoch_losses.push_back(sum / static_cast<double>(batches));
    }
    return epoch_losses;
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
        layers.push_back(std::make_shared<nn::Autoencoder>(widths[l - 1], widths[l], gen));
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
                                                       const PretrainSettings& settings, ag::Generator& order) {
    std::vector<std::vector<double>> curves;
    for (size_t l = 0; l < net.layers.size(); ++l) {
        ag::Tensor input;  // the fixed codes of the layers below: x itself for layer 1
        {
            ag::NoGradGuard fixed;
            input = net.codes(images, l);
        }
        const nn::Autoencoder& layer = *net.layers[l];
        curves.push_back(train_epochs(layer.parameters(), input.size(0), settings, order, [&](const ag::Tensor& rows) {
            return layer.loss(ag::index_select(input, 0, rows));  // ‖x - h(W' h(W x))‖² / n
        }));
    }
    return curves;
}

std::vector<std::vector<double>> pretrain_supervised(DigitNet& net, const LabelledImages& data,
                                                     const PretrainSettings& settings, ag::Generator& order) {
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
        curves.push_back(train_epochs(
            parameters_of(encoder, temporary), input.size(0), settings, order, [&](const ag::Tensor& rows) {
                const ag::Tensor z = net.layers[l]->encode(ag::index_select(input, 0, rows));
                return ag::cross_entropy(temporary.forward(z), ag::index_select(labels, 0, rows));
            }));
    }
    return curves;
}

std::vector<double> finetune(DigitNet& net, const LabelledImages& data, int64_t steps, double lr) {
    const ag::Tensor labels = label_tensor(data.labels);
    optim::AdamW opt = adam(net.classifier_parameters(), lr);
    std::vector<double> losses;
    for (int64_t s = 0; s < steps; ++s) {
        const ag::Tensor loss = ag::cross_entropy(net.logits(data.images), labels);
        opt.zero_grad();
        loss.backward();
        opt.step();
        losses.push_back(loss.item());
    }
    return losses;
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
