#include "autograd/gradcheck.h"

#include <cmath>

#include <fmt/format.h>

#include "autograd/engine.h"
#include "autograd/generator.h"
#include "autograd/ops.h"

namespace ag {

GradcheckResult gradcheck(const TensorFunction& f, const std::vector<Tensor>& inputs, double h, double atol,
                          double rtol, uint64_t seed) {
    // L(x) = Σ f(x) ⊙ w, with w fixed: one scalar that sees every output.
    Generator gen(seed);
    Tensor w;
    const auto loss = [&](const std::vector<Tensor>& xs) {
        const Tensor y = f(xs);
        if (!w.defined()) w = Tensor::uniform(y.shape(), gen, -1.0, 1.0);
        return sum(mul(y, w));
    };

    // Analytic: one backward pass on fresh leaves.
    std::vector<Tensor> leaves;
    for (const Tensor& x : inputs) {
        Tensor leaf = x.detach().contiguous().clone();
        leaf.requires_grad_(x.requires_grad());
        leaves.push_back(leaf);
    }
    loss(leaves).backward();

    GradcheckResult result;
    NoGradGuard no_grad;
    for (size_t k = 0; k < leaves.size(); ++k) {
        if (!leaves[k].requires_grad()) continue;
        const Tensor analytic = leaves[k].grad().defined() ? leaves[k].grad() : Tensor::zeros(leaves[k].shape());
        double* x = leaves[k].data();
        for (int64_t i = 0; i < leaves[k].numel(); ++i) {
            // Numeric: central difference in element i of input k.
            const double saved = x[i];
            x[i] = saved + h;
            const double up = loss(leaves).item();
            x[i] = saved - h;
            const double down = loss(leaves).item();
            x[i] = saved;
            const double numeric = (up - down) / (2.0 * h);
            const double exact = analytic.data()[i];
            const double err = std::abs(exact - numeric);
            result.max_abs_error = std::max(result.max_abs_error, err);
            result.max_rel_error = std::max(result.max_rel_error, err / std::max(1.0, std::abs(numeric)));
            if (result.ok && !(err <= atol + rtol * std::abs(numeric))) {
                result.ok = false;
                result.message = fmt::format("input {} element {}: backward gives {:.10g}, finite differences {:.10g}",
                                             k, i, exact, numeric);
            }
        }
    }
    return result;
}

}  // namespace ag
