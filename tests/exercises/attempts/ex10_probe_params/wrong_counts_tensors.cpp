// Attempt (wrong): counts the trainable parameters as the optimiser's list
// sees them, one per tensor (the head has 2: weight and bias), instead of
// the numbers inside them.
#include "exercises/ex10_probe_params.h"

#include "exercises/not_implemented.h"

namespace ex10 {

int64_t probe_trainable(nn::Module& body, nn::Module& head) {
    body.requires_grad_(false);
    head.requires_grad_(true);
    return static_cast<int64_t>(body.trainable_parameters().size() + head.trainable_parameters().size());
}

int64_t finetune_trainable(nn::Module& body, nn::Module& head) {
    body.requires_grad_(true);
    head.requires_grad_(true);
    return static_cast<int64_t>(body.trainable_parameters().size() + head.trainable_parameters().size());
}

}  // namespace ex10
