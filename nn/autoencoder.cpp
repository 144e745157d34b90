#include "nn/autoencoder.h"

#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

namespace nn {

Autoencoder::Autoencoder(const AutoencoderOptions& options_, ag::Generator& gen) : options(options_) {
    enc = register_module("enc", std::make_shared<Linear>(LinearOptions(options.in(), options.hidden()), gen));
    dec = register_module("dec", std::make_shared<Linear>(LinearOptions(options.hidden(), options.in()), gen));
}

Tensor Autoencoder::decode(const Tensor& z) const {
    const Tensor a = dec->forward(z);
    return options.reconstruction() == Reconstruction::PixelCrossEntropy ? ag::sigmoid(a) : squash(a);
}

// The cross-entropy is taken from the decoder's logits W' z + b', not from
// σ of them: the same number without log(0) when a pixel saturates.
Tensor Autoencoder::loss(const Tensor& x) const {
    if (options.reconstruction() == Reconstruction::PixelCrossEntropy)
        return ag::binary_cross_entropy_with_logits(dec->forward(encode(x)), x);
    return ag::mse_loss(reconstruct(x), x);
}

Tensor encode_stack(const std::vector<std::shared_ptr<Autoencoder>>& stack, const Tensor& x) {
    Tensor h = x;
    for (const auto& layer : stack) h = layer->encode(h);
    return h;
}

ClassifierHead::ClassifierHead(int64_t d, int64_t classes, ag::Generator& gen) {
    const double bound = 1.0 / std::sqrt(static_cast<double>(d));  // nn.Linear's default
    weight = register_parameter("weight", Tensor::uniform({classes, d}, gen, -bound, bound));
    bias = register_parameter("bias", Tensor::uniform({classes}, gen, -bound, bound));
}

// Pick row b's hidden state at position last[b] (an index_select on the
// flattened [B·T, d] states, so the gradient flows back to exactly those
// positions), then the linear map.
Tensor ClassifierHead::forward(const Tensor& hidden, const std::vector<int64_t>& last) const {
    if (hidden.dim() != 3 || static_cast<int64_t>(last.size()) != hidden.size(0))
        throw std::invalid_argument(fmt::format("ClassifierHead: hidden {} with {} positions (needs [B, T, d], B = {})",
                                                ag::shape_str(hidden.shape()), last.size(), last.size()));
    const int64_t B = hidden.size(0), T = hidden.size(1);
    std::vector<double> rows;
    for (int64_t b = 0; b < B; ++b) {
        const int64_t t = last[static_cast<size_t>(b)];
        if (t < 0 || t >= T)
            throw std::invalid_argument(fmt::format("ClassifierHead: position {} outside [0, {})", t, T));
        rows.push_back(static_cast<double>(b * T + t));
    }
    const Tensor picked = ag::index_select(hidden.reshape({B * T, hidden.size(2)}), 0, Tensor::from({B}, rows));
    return forward(picked);
}

}  // namespace nn
