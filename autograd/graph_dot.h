#pragma once
// The computational graph behind a tensor as a picture (§1: a graph is
// another way to write the function), the way micrograd's draw_dot does it:
// Graphviz's DOT language, which `dot -Tsvg graph.dot -o graph.svg`
// renders (Debian's graphviz package).
//
//   leaves      boxes: name, shape, whether they require grad
//   op nodes    ellipses: the op's name ("matmul", "tanh", …)
//   edges       from what an op reads to the op, labelled with the shape
//               that flows along them; the last one into the root's box
#include <string>

#include "autograd/tensor.h"

namespace ag {

// The graph that root.backward() would walk, in DOT, drawn top to bottom.
// A root without a graph (a leaf, or made under NoGradGuard) is one box.
std::string to_dot(const Tensor& root, const std::string& root_name = "output");

}  // namespace ag
