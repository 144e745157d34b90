// Attempt (wrong): freezes by detaching: p = p.detach() on each body parameter,
// as in "detach() stops the gradient"; that only rebinds the loop's copy of the
// handle, and the module's parameters still require grad.
#include "exercises/ex10_probe_params.h"

namespace ex10 {
namespace {

int64_t trainable(const nn::Module& m) {
    int64_t n = 0;
    for (const nn::Tensor& p : m.parameters())
        if (p.requires_grad()) n += p.numel();
    return n;
}

}  // namespace

int64_t probe_trainable(nn::Module& body, nn::Module& head) {
    for (nn::Tensor p : body.parameters()) p = p.detach();
    head.requires_grad_(true);
    return trainable(head);
}

int64_t finetune_trainable(nn::Module& body, nn::Module& head) {
    body.requires_grad_(true);
    head.requires_grad_(true);
    return trainable(body) + trainable(head);
}

}  // namespace ex10
