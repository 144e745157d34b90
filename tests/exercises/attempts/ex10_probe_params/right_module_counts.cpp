// Attempt (right): switches the flags tensor by tensor through
// named_parameters() and counts with the Module's own
// num_trainable_parameters() afterwards.
#include "exercises/ex10_probe_params.h"

namespace ex10 {
namespace {

void set_trainable(nn::Module& m, bool on) {
    for (auto& named : m.named_parameters()) named.second.requires_grad_(on);
}

int64_t trainable(const nn::Module& m) { return m.num_trainable_parameters(); }

}  // namespace

int64_t probe_trainable(nn::Module& body, nn::Module& head) {
    set_trainable(body, false);
    set_trainable(head, true);
    return trainable(body) + trainable(head);
}

int64_t finetune_trainable(nn::Module& body, nn::Module& head) {
    set_trainable(head, true);
    set_trainable(body, true);
    return trainable(body) + trainable(head);
}

}  // namespace ex10
