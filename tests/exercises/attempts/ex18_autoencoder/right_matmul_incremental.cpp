// Attempt (right): writes the affine maps as matmul with a transpose plus a
// broadcast bias, the loss with ag::mse_loss, the update through a list of
// pointers to the layer's members, and trains the stack on codes carried
// forward one layer at a time instead of re-encoding x through the whole
// stack.
#include "exercises/ex18_autoencoder.h"

#include <cmath>

#include "autograd/autograd.h"

namespace ex18 {

namespace {

ag::Tensor uniform_param(const ag::Shape& shape, int64_t fan_in, ag::Generator& gen) {
    const double bound = 1.0 / std::sqrt(static_cast<double>(fan_in));
    return ag::Tensor::uniform(shape, gen, -bound, bound, /*requires_grad=*/true);
}

ag::Tensor affine_sigmoid(const ag::Tensor& input, const ag::Tensor& weight, const ag::Tensor& bias) {
    return ag::sigmoid(ag::matmul(input, weight.t()) + bias);
}

}  // namespace

Layer new_layer(int64_t in, int64_t hidden, ag::Generator& gen) {
    Layer l;
    l.enc_weight = uniform_param({hidden, in}, in, gen);
    l.enc_bias = uniform_param({hidden}, in, gen);
    l.dec_weight = uniform_param({in, hidden}, hidden, gen);
    l.dec_bias = uniform_param({in}, hidden, gen);
    return l;
}

ag::Tensor encode(const Layer& layer, const ag::Tensor& x) {
    return affine_sigmoid(x, layer.enc_weight, layer.enc_bias);
}

ag::Tensor decode(const Layer& layer, const ag::Tensor& z) {
    return affine_sigmoid(z, layer.dec_weight, layer.dec_bias);
}

ag::Tensor reconstruction_loss(const Layer& layer, const ag::Tensor& x) {
    return ag::mse_loss(decode(layer, encode(layer, x)), x);
}

double train_step(Layer& layer, const ag::Tensor& x, double lr) {
    const ag::Tensor loss = reconstruction_loss(layer, x);
    const double before = loss.item();
    loss.backward();
    ag::NoGradGuard guard;
    for (ag::Tensor* p : {&layer.enc_weight, &layer.enc_bias, &layer.dec_weight, &layer.dec_bias}) {
        const std::vector<double> g = p->grad().to_vector();
        double* v = p->data();
        for (size_t i = 0; i < g.size(); ++i) v[i] = v[i] - lr * g[i];
        p->zero_grad();
    }
    return before;
}

std::vector<Layer> train_stack(const ag::Tensor& x, const std::vector<int64_t>& widths, int64_t steps, double lr,
                               ag::Generator& gen) {
    std::vector<Layer> out;
    ag::Tensor codes = x;  // what the next layer learns to reconstruct
    for (size_t l = 0; l + 1 < widths.size(); ++l) {
        Layer layer = new_layer(widths[l], widths[l + 1], gen);
        for (int64_t s = 0; s < steps; ++s) train_step(layer, codes, lr);
        {
            ag::NoGradGuard frozen;
            codes = encode(layer, codes);
        }
        out.push_back(layer);
    }
    return out;
}

ag::Tensor encode_stack(const std::vector<Layer>& layers, const ag::Tensor& x) {
    if (layers.empty()) return x;
    ag::Tensor h = encode(layers.front(), x);
    for (size_t l = 1; l < layers.size(); ++l) h = encode(layers[l], h);
    return h;
}

}  // namespace ex18
