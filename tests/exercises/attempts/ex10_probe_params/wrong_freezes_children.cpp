// Attempt (wrong): freezes the body sub-module by sub-module through
// named_children(), so parameters registered on the body itself (a plain
// Linear body has only those) stay trainable.
#include "exercises/ex10_probe_params.h"

namespace ex10 {

int64_t probe_trainable(nn::Module& body, nn::Module& head) {
    for (const auto& [name, child] : body.named_children()) child->requires_grad_(false);
    head.requires_grad_(true);
    return body.num_trainable_parameters() + head.num_trainable_parameters();
}

int64_t finetune_trainable(nn::Module& body, nn::Module& head) {
    body.requires_grad_(true);
    head.requires_grad_(true);
    return body.num_trainable_parameters() + head.num_trainable_parameters();
}

}  // namespace ex10
