#pragma once
// Exercise 10 · a linear probe's parameters vs full fine-tuning (lecture
// §2.8, exercise 10). The statement is in ex10_probe_params.cpp.
#include <cstdint>

#include "nn/module.h"

namespace ex10 {

// Set up a linear probe: freeze every parameter of `body`, keep the head
// trainable; return how many numbers the optimiser will train.
int64_t probe_trainable(nn::Module& body, nn::Module& head);

// Set up full fine-tuning: every parameter of body and head trainable;
// return how many numbers the optimiser will train.
int64_t finetune_trainable(nn::Module& body, nn::Module& head);

}  // namespace ex10
