// Attempt (wrong): "full fine-tuning trains everything", so it returns the
// size of body and head without switching their gradients on; after a probe
// the body stays frozen and the optimiser would train the head only.
#include "exercises/ex10_probe_params.h"

#include "exercises/not_implemented.h"

namespace ex10 {

int64_t probe_trainable(nn::Module& body, nn::Module& head) {
    body.requires_grad_(false);
    head.requires_grad_(true);
    return head.num_trainable_parameters();
}

int64_t finetune_trainable(nn::Module& body, nn::Module& head) {
    int64_t total = 0;
    for (const nn::Tensor& p : body.parameters()) total += p.numel();
    for (const nn::Tensor& p : head.parameters()) total += p.numel();
    return total;
}

}  // namespace ex10
