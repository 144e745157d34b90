// Attempt (wrong): takes the probe to be the head's weight matrix (64 × 2 = 128
// numbers) and freezes the bias with the body; the probe trains the whole head,
// bias included (130).
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
    body.requires_grad_(false);
    for (auto& [name, p] : head.named_parameters()) p.requires_grad_(name == "weight");
    return trainable(body) + trainable(head);
}

int64_t finetune_trainable(nn::Module& body, nn::Module& head) {
    body.requires_grad_(true);
    head.requires_grad_(true);
    return trainable(body) + trainable(head);
}

}  // namespace ex10
