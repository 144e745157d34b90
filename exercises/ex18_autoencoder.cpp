// Exercise 18 · one autoencoder layer and greedy layer-wise stacking
// (lecture §2.4)
//
// "What should an unsupervised first layer predict? Its own input." An
// autoencoder layer maps x to a code and back:
//     encoder  z  = h(W x + b)        W [hidden, in], b [hidden]
//     decoder  x' = h(W' z + b')      W' [in, hidden], b' [in]
//     loss     mean squared reconstruction error Σ (x' - x)² / (N·in)
// with h the sigmoid, trained by backpropagation like any two-layer net (x
// is both input and target). With hidden < in it must compress. Greedy
// layer-wise pre-training trains layer 1 on x, then layer 2 on layer 1's
// codes z (layer 1 fixed), and so on; the stacked encoders
// h(W_n … h(W_1 x)) then sit under a classifier and are fine-tuned
// together (lesson 01 part 1), so gradients must flow through encode_stack
// to every encoder; only train_stack computes the codes it trains on
// without gradient.
//
// The conventions are those of nn::Autoencoder (nn/autoencoder.h): rows
// are examples, so W x + b for every row at once is x Wᵀ + b, which
// ag::linear(x, W, b) computes. Write, in ex18_autoencoder.h:
//   Layer new_layer(in, hidden, gen)      the numbers nn::Autoencoder draws
//   ag::Tensor encode(layer, x)           z = h(W x + b)
//   ag::Tensor decode(layer, z)           x' = h(W' z + b')
//   ag::Tensor reconstruction_loss(layer, x)
//   double train_step(layer, x, lr)       one gradient-descent step (loss
//       .backward(), then under an ag::NoGradGuard p -= lr · p.grad() in
//       place, and clear the gradients: backward() adds to .grad())
//   std::vector<Layer> train_stack(x, widths, steps, lr, gen)
//   ag::Tensor encode_stack(layers, x)
// Use engine ops (ops.h) so that gradients flow.
//
// Graded: new_layer draws nn::Autoencoder's numbers in its order (W, b, W', b';
// drawing b before W or the decoder with the bound 1/√in are named), all four
// requiring grad; encode, decode and the loss equal nn::Autoencoder's and the
// reference's on fixed weights, for N = 1 and in = hidden = 1 too, and on an x
// that is a view (not contiguous) (a missing bias or sigmoid, tied weights, a
// summed loss are named); encode and decode where W x + b is in the thousands
// (the sigmoid saturates to 1 or 0, no NaN), and their gradients there (0 where
// saturated, no NaN); a gradient check of the loss w.r.t. all four parameters;
// train_step equals the reference step for step, returns the loss before its
// update (the loss after it is named), updates the layer's own tensors in
// place, leaves no gradient on them after each step and x unchanged, and the
// loss decreases over training; the stack's layer and output shapes, its layers
// and codes equal the reference's (training layer 2 on x, or on the codes of
// layer 1 before its training, is named), layer 1 left as its own training made
// it, no gradient left on any layer (the codes below are fixed) and every
// parameter still requiring grad (to be fine-tuned), the generator moved on
// exactly as far as the reference's; one layer, no layer (widths = {in}) and
// steps = 0; gradients of encode_stack's codes reaching every layer's W and b
// (a gradient check) and no decoder, as fine-tuning the stack under a
// classifier needs.
#include "exercises/ex18_autoencoder.h"

#include "autograd/autograd.h"
#include "exercises/not_implemented.h"

namespace ex18 {

Layer new_layer(int64_t in, int64_t hidden, ag::Generator& gen) {
    // TODO
    (void)in, (void)hidden, (void)gen;
    throw exercises::not_implemented("ex18 autoencoder: new_layer");
}

ag::Tensor encode(const Layer& layer, const ag::Tensor& x) {
    // TODO: z = h(W x + b)
    (void)layer, (void)x;
    throw exercises::not_implemented("ex18 autoencoder: encode");
}

ag::Tensor decode(const Layer& layer, const ag::Tensor& z) {
    // TODO: x' = h(W' z + b')
    (void)layer, (void)z;
    throw exercises::not_implemented("ex18 autoencoder: decode");
}

ag::Tensor reconstruction_loss(const Layer& layer, const ag::Tensor& x) {
    // TODO: mean of (x' - x)²
    (void)layer, (void)x;
    throw exercises::not_implemented("ex18 autoencoder: reconstruction_loss");
}

double train_step(Layer& layer, const ag::Tensor& x, double lr) {
    // TODO: loss, backward, p -= lr · grad, clear the gradients
    (void)layer, (void)x, (void)lr;
    throw exercises::not_implemented("ex18 autoencoder: train_step");
}

std::vector<Layer> train_stack(const ag::Tensor& x, const std::vector<int64_t>& widths, int64_t steps, double lr,
                               ag::Generator& gen) {
    // TODO: greedy, one layer at a time
    (void)x, (void)widths, (void)steps, (void)lr, (void)gen;
    throw exercises::not_implemented("ex18 autoencoder: train_stack");
}

ag::Tensor encode_stack(const std::vector<Layer>& layers, const ag::Tensor& x) {
    // TODO
    (void)layers, (void)x;
    throw exercises::not_implemented("ex18 autoencoder: encode_stack");
}

}  // namespace ex18
