// Attempt (wrong): "a new head is trainable anyway", so the probe only
// freezes the body and never turns the head's gradients back on; a head that
// was frozen before stays frozen and the probe trains nothing.
#include "exercises/ex10_probe_params.h"

#include "exercises/not_implemented.h"

namespace ex10 {
namespace {

int64_t count_trainable(const nn::Module& m) {
    int64_t n = 0;
    for (const auto& [name, p] : m.named_parameters())
        if (p.requires_grad()) n += p.numel();
    return n;
}

}  // namespace

int64_t probe_trainable(nn::Module& body, nn::Module& head) {
    body.requires_grad_(false);
    return count_trainable(body) + count_trainable(head);
}

int64_t finetune_trainable(nn::Module& body, nn::Module& head) {
    body.requires_grad_(true);
    head.requires_grad_(true);
    return count_trainable(body) + count_trainable(head);
}

}  // namespace ex10
