#pragma once
// Lesson 00, autograd recap (§1): the engine itself, in three parts.
//   1. modules with forward() and backward(), written by hand;
//   2. the same MLP as a computational graph, in topological order;
//   3. its gradients three ways: engine, finite differences, by hand.
// Parts 1 and 2 show seed 0; part 3 checks every seed 0 … seeds-1.
#include "lessons/common/lesson.h"

namespace lessons::autograd_recap {

const Lesson& lesson();

}  // namespace lessons::autograd_recap
