// Attempt (wrong): takes "freeze the body" for evaluation mode, body.eval() (as
// for dropout); eval() changes no requires_grad flag, so the optimiser still
// trains every body parameter.
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
    body.eval();
    head.train();
    return trainable(body) + trainable(head);
}

int64_t finetune_trainable(nn::Module& body, nn::Module& head) {
    body.train();
    head.train();
    return trainable(body) + trainable(head);
}

}  // namespace ex10
