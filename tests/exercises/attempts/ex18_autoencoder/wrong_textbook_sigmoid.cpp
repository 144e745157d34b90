// Attempt (wrong): writes the sigmoid as the textbook 1 / (1 + exp(-a)) from engine ops. Its values
// saturate well (exp(-a) = inf gives 1 / inf = 0), but its backward does not: for a below about -709 the
// chain rule meets inf · 0 and inf / inf, so the gradient is NaN where the slope σ(1 - σ) is 0, and one
// training step on such inputs turns every weight into NaN.
#include "exercises/ex18_autoencoder.h"

#include <cmath>

#include "autograd/autograd.h"

namespace ex18 {

Layer new_layer(int64_t in, int64_t hidden, ag::Generator& gen) {
    const double be = 1.0 / std::sqrt(static_cast<double>(in)), bd = 1.0 / std::sqrt(static_cast<double>(hidden));
    Layer l;
    l.enc_weight = ag::Tensor::uniform({hidden, in}, gen, -be, be, true);
    l.enc_bias = ag::Tensor::uniform({hidden}, gen, -be, be, true);
    l.dec_weight = ag::Tensor::uniform({in, hidden}, gen, -bd, bd, true);
    l.dec_bias = ag::Tensor::uniform({in}, gen, -bd, bd, true);
    return l;
}

static ag::Tensor h(const ag::Tensor& a) { return 1.0 / (1.0 + ag::exp(-a)); }

ag::Tensor encode(const Layer& layer, const ag::Tensor& x) {
    return h(ag::linear(x, layer.enc_weight, layer.enc_bias));
}

ag::Tensor decode(const Layer& layer, const ag::Tensor& z) {
    return h(ag::linear(z, layer.dec_weight, layer.dec_bias));
}

ag::Tensor reconstruction_loss(const Layer& layer, const ag::Tensor& x) {
    return ag::mean(ag::pow(decode(layer, encode(layer, x)) - x, 2.0));
}

double train_step(Layer& layer, const ag::Tensor& x, double lr) {
    ag::Tensor loss = reconstruction_loss(layer, x);
    const double before = loss.item();
    loss.backward();
    {
        ag::NoGradGuard guard;
        for (ag::Tensor p : layer.parameters()) {
            const ag::Tensor g = p.grad().contiguous();
            double* d = p.data();
            const double* gd = g.data();
            for (int64_t i = 0; i < p.numel(); ++i) d[i] -= lr * gd[i];
        }
    }
    for (ag::Tensor p : layer.parameters()) p.zero_grad();
    return before;
}

std::vector<Layer> train_stack(const ag::Tensor& x, const std::vector<int64_t>& widths, int64_t steps, double lr,
                               ag::Generator& gen) {
    std::vector<Layer> layers;
    ag::Tensor codes = x;
    for (size_t l = 1; l < widths.size(); ++l) {
        Layer layer = new_layer(widths[l - 1], widths[l], gen);
        for (int64_t s = 0; s < steps; ++s) train_step(layer, codes, lr);
        {
            ag::NoGradGuard guard;
            codes = encode(layer, codes);
        }
        layers.push_back(layer);
    }
    return layers;
}

ag::Tensor encode_stack(const std::vector<Layer>& layers, const ag::Tensor& x) {
    ag::Tensor z = x;
    for (const Layer& l : layers) z = encode(l, z);
    return z;
}

}  // namespace ex18
