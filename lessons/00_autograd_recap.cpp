// Lesson 00, autograd recap (lecture 4 §1): the engine itself. Modules with
// forward() and backward(), a computational graph printed in topological
// order, and a small MLP's gradients checked against finite differences and
// against the same gradient computed by hand. The parts live in
// autograd_recap/, where tests/lessons runs them too.
#include "lessons/autograd_recap/parts.h"

int main(int argc, char** argv) { return lessons::run_lesson(argc, argv, lessons::autograd_recap::lesson()); }
