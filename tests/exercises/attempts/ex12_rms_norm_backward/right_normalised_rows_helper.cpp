// Attempt (right): one helper per row on std::vector works with the
// normalised row x̂ = x r and the LayerNorm-like form
// dx = r (g ⊙ dy - x̂ mean(g ⊙ dy ⊙ x̂)); the forward reads with at() (any
// layout) and the backward closure keeps plain copies of the numbers.
#include "exercises/ex12_rms_norm_backward.h"

#include <cmath>
#include <vector>

#include "exercises/not_implemented.h"

namespace ex12 {

namespace {

using Row = std::vector<double>;

Row row_of(const ag::Tensor& t, int64_t n) {
    Row out;
    for (int64_t j = 0; j < t.size(1); ++j) out.push_back(t.at({n, j}));
    return out;
}

Row vector_of(const ag::Tensor& w) {
    Row out;
    for (int64_t j = 0; j < w.size(0); ++j) out.push_back(w.at({j}));
    return out;
}

double inverse_rms(const Row& x, double eps) {
    double ms = 0.0;
    for (const double v : x) ms += v * v / static_cast<double>(x.size());
    return 1.0 / std::sqrt(ms + eps);
}

}  // namespace

ag::Tensor rms_norm(const ag::Tensor& x, const ag::Tensor& weight, double eps) {
    const Row g = vector_of(weight);
    std::vector<double> y;
    for (int64_t n = 0; n < x.size(0); ++n) {
        const Row xn = row_of(x, n);
        const double r = inverse_rms(xn, eps);
        for (size_t j = 0; j < xn.size(); ++j) y.push_back(xn[j] * r * g[j]);
    }
    const ag::Tensor x_saved = x.detach(), w_saved = weight.detach();
    return ag::record("rms_norm", ag::Tensor::from(x.shape(), y), {x, weight},
                      [x_saved, w_saved, eps](const ag::Tensor& dy) {
                          RmsNormGrads grads = rms_norm_backward(x_saved, w_saved, eps, dy);
                          return std::vector<ag::Tensor>{grads.dx, grads.dweight};
                      });
}

RmsNormGrads rms_norm_backward(const ag::Tensor& x, const ag::Tensor& weight, double eps, const ag::Tensor& dy) {
    const Row g = vector_of(weight);
    const size_t d = g.size();
    std::vector<double> dx;
    Row dweight(d, 0.0);
    for (int64_t n = 0; n < x.size(0); ++n) {
        const Row xn = row_of(x, n), dyn = row_of(dy, n);
        const double r = inverse_rms(xn, eps);
        double m = 0.0;  // mean(g ⊙ dy ⊙ x̂)
        for (size_t j = 0; j < d; ++j) m += g[j] * dyn[j] * xn[j] * r / static_cast<double>(d);
        for (size_t j = 0; j < d; ++j) {
            const double xhat = xn[j] * r;
            dx.push_back(r * (g[j] * dyn[j] - xhat * m));
            dweight[j] += dyn[j] * xhat;
        }
    }
    return {ag::Tensor::from(x.shape(), dx), ag::Tensor::from({static_cast<int64_t>(d)}, dweight)};
}

}  // namespace ex12
