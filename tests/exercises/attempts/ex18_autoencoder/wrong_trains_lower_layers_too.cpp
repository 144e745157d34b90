// Attempt (wrong): while layer l learns to reconstruct the codes, the
// gradient is let through to the layers below and they are stepped too
// ("fine-tuning as we go"), so layer 1 does not stay as its own training left
// it: greedy pre-training keeps the lower layers fixed.
#include "exercises/ex18_autoencoder.h"

#include <cmath>

#include "autograd/autograd.h"

namespace ex18 {

Layer new_layer(int64_t in, int64_t hidden, ag::Generator& gen) {
    const double a = 1.0 / std::sqrt(static_cast<double>(in)), c = 1.0 / std::sqrt(static_cast<double>(hidden));
    Layer layer;
    layer.enc_weight = ag::Tensor::uniform({hidden, in}, gen, -a, a, true);
    layer.enc_bias = ag::Tensor::uniform({hidden}, gen, -a, a, true);
    layer.dec_weight = ag::Tensor::uniform({in, hidden}, gen, -c, c, true);
    layer.dec_bias = ag::Tensor::uniform({in}, gen, -c, c, true);
    return layer;
}

ag::Tensor encode(const Layer& layer, const ag::Tensor& x) {
    return ag::sigmoid(ag::linear(x, layer.enc_weight, layer.enc_bias));
}

ag::Tensor decode(const Layer& layer, const ag::Tensor& z) {
    return ag::sigmoid(ag::linear(z, layer.dec_weight, layer.dec_bias));
}

ag::Tensor reconstruction_loss(const Layer& layer, const ag::Tensor& x) {
    const ag::Tensor diff = decode(layer, encode(layer, x)) - x;
    return ag::mean(diff * diff);
}

double train_step(Layer& layer, const ag::Tensor& x, double lr) {
    ag::Tensor loss = reconstruction_loss(layer, x);
    loss.backward();
    {
        ag::NoGradGuard no_grad;
        for (ag::Tensor p : layer.parameters()) {
            const ag::Tensor g = p.grad().contiguous();
            for (int64_t i = 0; i < p.numel(); ++i) p.data()[i] -= lr * g.data()[i];
            p.zero_grad();
        }
    }
    return loss.item();
}

std::vector<Layer> train_stack(const ag::Tensor& x, const std::vector<int64_t>& widths, int64_t steps, double lr,
                               ag::Generator& gen) {
    std::vector<Layer> layers;
    for (size_t l = 1; l < widths.size(); ++l) {
        Layer layer = new_layer(widths[l - 1], widths[l], gen);
        for (int64_t s = 0; s < steps; ++s) {
            // the lower encoders learn along: one backward through the whole stack
            const ag::Tensor codes = encode_stack(layers, x);
            const ag::Tensor loss = ag::mean(ag::pow(decode(layer, encode(layer, codes)) - codes.detach(), 2.0));
            loss.backward();
            ag::NoGradGuard no_grad;
            std::vector<ag::Tensor> params = layer.parameters();
            for (const Layer& below : layers) params.insert(params.end(), {below.enc_weight, below.enc_bias});
            for (ag::Tensor p : params) {
                const ag::Tensor g = p.grad().contiguous();
                for (int64_t i = 0; i < p.numel(); ++i) p.data()[i] -= lr * g.data()[i];
                p.zero_grad();
            }
        }
        layers.push_back(layer);
    }
    return layers;
}

ag::Tensor encode_stack(const std::vector<Layer>& layers, const ag::Tensor& x) {
    ag::Tensor z = x;
    for (const Layer& layer : layers) z = encode(layer, z);
    return z;
}

}  // namespace ex18
