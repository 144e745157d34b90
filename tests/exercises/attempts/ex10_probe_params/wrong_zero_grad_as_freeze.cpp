// Attempt (wrong): "freezing" as clearing the body's gradients with
// zero_grad(), so they cannot change the weights; the next backward fills them
// again, since the parameters still require grad.
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
    body.zero_grad();
    head.requires_grad_(true);
    return trainable(body) + trainable(head);
}

int64_t finetune_trainable(nn::Module& body, nn::Module& head) {
    body.requires_grad_(true);
    head.requires_grad_(true);
    return trainable(body) + trainable(head);
}

}  // namespace ex10
