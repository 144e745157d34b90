// Exercise 10 · a linear probe's parameters vs full fine-tuning (lecture
// §2.8; §10 exercise 10)
//
// In §2.8 a pre-trained GPT reads a prefix and a head Linear(64, 2) on its
// last hidden state predicts the subject's number. A linear probe trains
// the head only; full fine-tuning trains the body too. With 16 labelled
// examples the probe scored 1.000 and full fine-tuning 0.910: count the
// numbers each one trains and explain the gap with "parameters vs
// examples". What do you expect at 256 examples?
//
// Write probe_trainable() and finetune_trainable() (ex10_probe_params.h)
// with the Module API (nn/module.h): parameters(), requires_grad_(),
// Tensor::requires_grad(), numel().
//
// Graded: 130 for the probe on the lecture's GPT, 111,490 for full
// fine-tuning (111,360 + 130), counted in numbers (numel), not tensors;
// after probe_trainable() every parameter of the body is frozen and every
// one of the head trainable; after finetune_trainable() nothing is frozen.
// Whatever state the modules were in before: a frozen head, a half-frozen
// body, probe and fine-tuning one after the other in either order; other
// bodies (ModernLM, a plain Linear) and heads (3 and 10 classes).
#include "exercises/ex10_probe_params.h"

#include "exercises/not_implemented.h"

namespace ex10 {

int64_t probe_trainable(nn::Module& body, nn::Module& head) {
    // TODO
    (void)body, (void)head;
    throw exercises::not_implemented("ex10 probe_params: probe_trainable");
}

int64_t finetune_trainable(nn::Module& body, nn::Module& head) {
    // TODO
    (void)body, (void)head;
    throw exercises::not_implemented("ex10 probe_params: finetune_trainable");
}

}  // namespace ex10
