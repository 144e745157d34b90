#pragma once
// gradcheck: does an op's hand-written backward agree with the definition
// of a derivative? For every element x_i of every input that requires grad,
// compare the backward's dL/dx_i with the central difference
//   (L(x + h e_i) - L(x - h e_i)) / 2h,
// where L = Σ f(x) ⊙ w for a fixed random w (so a non-scalar f is checked
// in every output direction at once). Error O(h²); double precision makes
// h = 1e-6 safe.
#include <functional>
#include <string>
#include <vector>

#include "autograd/tensor.h"

namespace ag {

struct GradcheckResult {
    bool ok = true;
    double max_abs_error = 0.0;  // worst |analytic - numeric|
    double max_rel_error = 0.0;  // worst of the same divided by max(1, |numeric|)
    std::string message;         // the first failing element, if any
};

using TensorFunction = std::function<Tensor(const std::vector<Tensor>&)>;

GradcheckResult gradcheck(const TensorFunction& f, const std::vector<Tensor>& inputs, double h = 1e-6,
                          double atol = 1e-5, double rtol = 1e-4, uint64_t seed = 0);

}  // namespace ag
