// Attempt (wrong): reads "y = x r ⊙ g, so dweight = Σ_rows dy ⊙ y" (the
// output instead of the thing g multiplies), which carries an extra factor g;
// ∂y_j/∂g_j = x_j r.
#include "exercises/ex12_rms_norm_backward.h"

#include <cmath>

#include "exercises/not_implemented.h"

namespace ex12 {

ag::Tensor rms_norm(const ag::Tensor& x, const ag::Tensor& weight, double eps) {
    ag::Tensor y;
    {
        ag::NoGradGuard no_graph;  // plain numbers: engine ops, nothing recorded
        const ag::Tensor r = 1.0 / ag::sqrt(ag::mean(x * x, {1}, true) + eps);
        y = x * r * weight;
    }
    const ag::Tensor xs = x.detach(), ws = weight.detach();
    return ag::record("rms_norm", y, {x, weight}, [xs, ws, eps](const ag::Tensor& dy) {
        const RmsNormGrads g = rms_norm_backward(xs, ws, eps, dy);
        return std::vector<ag::Tensor>{g.dx, g.dweight};
    });
}

RmsNormGrads rms_norm_backward(const ag::Tensor& x, const ag::Tensor& weight, double eps, const ag::Tensor& dy) {
    ag::NoGradGuard no_graph;
    const ag::Tensor r = 1.0 / ag::sqrt(ag::mean(x * x, {1}, true) + eps);
    const ag::Tensor u = weight * dy, y = x * r * weight;
    return {r * u - x * r * r * r * ag::mean(u * x, {1}, true), ag::sum(dy * y, {0})};
}

}  // namespace ex12
