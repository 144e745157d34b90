// Attempt (wrong): "the probe freezes the Transformer", taken as the blocks
// (layers.*) only; the embeddings and the final norm stay trainable, so the
// probe trains far more than the head's 130 numbers.
#include "exercises/ex10_probe_params.h"

#include "exercises/not_implemented.h"

namespace ex10 {

int64_t probe_trainable(nn::Module& body, nn::Module& head) {
    for (auto& [name, p] : body.named_parameters())
        if (name.rfind("layers.", 0) == 0) p.requires_grad_(false);
    head.requires_grad_(true);
    return body.num_trainable_parameters() + head.num_trainable_parameters();
}

int64_t finetune_trainable(nn::Module& body, nn::Module& head) {
    body.requires_grad_(true);
    head.requires_grad_(true);
    return body.num_trainable_parameters() + head.num_trainable_parameters();
}

}  // namespace ex10
