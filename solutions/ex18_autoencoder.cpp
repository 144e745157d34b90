// Exercise 18 · one autoencoder layer and greedy layer-wise stacking:
// reference solution (lecture §2.4).
#include "exercises/ex18_autoencoder.h"

#include <cmath>

#include "autograd/autograd.h"

namespace ex18 {

// nn::Linear's default initialisation, drawn in nn::Autoencoder's order:
// enc (W then b, bound 1/√in), dec (W' then b', bound 1/√hidden).
Layer new_layer(int64_t in, int64_t hidden, ag::Generator& gen) {
    const double enc_bound = 1.0 / std::sqrt(static_cast<double>(in));
    const double dec_bound = 1.0 / std::sqrt(static_cast<double>(hidden));
    Layer layer;
    layer.enc_weight = ag::Tensor::uniform({hidden, in}, gen, -enc_bound, enc_bound, true);
    layer.enc_bias = ag::Tensor::uniform({hidden}, gen, -enc_bound, enc_bound, true);
    layer.dec_weight = ag::Tensor::uniform({in, hidden}, gen, -dec_bound, dec_bound, true);
    layer.dec_bias = ag::Tensor::uniform({in}, gen, -dec_bound, dec_bound, true);
    return layer;
}

// Rows are examples: W x + b for each row is the row of x Wᵀ + b.
ag::Tensor encode(const Layer& layer, const ag::Tensor& x) {
    return ag::sigmoid(ag::linear(x, layer.enc_weight, layer.enc_bias));  // z = h(W x + b)
}

ag::Tensor decode(const Layer& layer, const ag::Tensor& z) {
    return ag::sigmoid(ag::linear(z, layer.dec_weight, layer.dec_bias));  // x' = h(W' z + b')
}

// Σ (x' - x)² / (N·in): x is input and target at once.
ag::Tensor reconstruction_loss(const Layer& layer, const ag::Tensor& x) {
    return ag::mean(ag::pow(decode(layer, encode(layer, x)) - x, 2.0));
}

double train_step(Layer& layer, const ag::Tensor& x, double lr) {
    const ag::Tensor loss = reconstruction_loss(layer, x);
    loss.backward();
    ag::NoGradGuard no_grad;  // the update itself is not part of any graph
    for (ag::Tensor p : layer.parameters()) {
        // p <- p - lr · dL/dp, in place: the layer keeps the same tensors
        const ag::Tensor g = p.grad().contiguous();
        double* values = p.data();
        for (int64_t i = 0; i < p.numel(); ++i) values[i] -= lr * g.data()[i];
        p.zero_grad();  // backward() accumulates: the next step starts from 0
    }
    return loss.item();
}

// Greedy: layer l learns to reconstruct the codes of the already trained
// layers 1 … l-1, which stay fixed (their codes are computed once, without
// a graph, so no gradient reaches them).
std::vector<Layer> train_stack(const ag::Tensor& x, const std::vector<int64_t>& widths, int64_t steps, double lr,
                               ag::Generator& gen) {
    std::vector<Layer> layers;
    for (size_t l = 1; l < widths.size(); ++l) {
        ag::Tensor input;
        {
            ag::NoGradGuard fixed;
            input = encode_stack(layers, x);
        }
        Layer layer = new_layer(widths[l - 1], widths[l], gen);
        for (int64_t s = 0; s < steps; ++s) train_step(layer, input, lr);
        layers.push_back(layer);
    }
    return layers;
}

ag::Tensor encode_stack(const std::vector<Layer>& layers, const ag::Tensor& x) {
    ag::Tensor h = x;
    for (const Layer& layer : layers) h = encode(layer, h);  // h(W_l h + b_l)
    return h;
}

}  // namespace ex18
