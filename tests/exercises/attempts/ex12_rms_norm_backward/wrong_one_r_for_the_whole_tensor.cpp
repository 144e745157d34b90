// Attempt (wrong): takes mean(x²) over the whole tensor, one r for all rows
// (like a norm of the batch), and differentiates that consistently; RMSNorm
// normalises each row (each token) on its own.
#include "exercises/ex12_rms_norm_backward.h"

#include <cmath>

#include "exercises/not_implemented.h"

namespace ex12 {

namespace {

double global_r(const ag::Tensor& xc, double eps) {
    double s = 0.0;
    for (int64_t i = 0; i < xc.numel(); ++i) s += xc.data()[i] * xc.data()[i];
    return 1.0 / std::sqrt(s / static_cast<double>(xc.numel()) + eps);
}

}  // namespace

ag::Tensor rms_norm(const ag::Tensor& x, const ag::Tensor& weight, double eps) {
    const ag::Tensor xc = x.detach().contiguous(), wc = weight.detach().contiguous();
    const int64_t N = xc.size(0), d = xc.size(1);
    const double r = global_r(xc, eps);
    ag::Tensor y = ag::Tensor::zeros({N, d});
    for (int64_t n = 0; n < N; ++n)
        for (int64_t j = 0; j < d; ++j) y.data()[n * d + j] = xc.data()[n * d + j] * r * wc.data()[j];
    return ag::record("rms_norm", y, {x, weight}, [xc, wc, eps](const ag::Tensor& dy) {
        const RmsNormGrads g = rms_norm_backward(xc, wc, eps, dy);
        return std::vector<ag::Tensor>{g.dx, g.dweight};
    });
}

// r depends on every x of the tensor: ∂r/∂x_k = -r³ x_k / (N d).
RmsNormGrads rms_norm_backward(const ag::Tensor& x, const ag::Tensor& weight, double eps, const ag::Tensor& dy) {
    const ag::Tensor xc = x.detach().contiguous(), wc = weight.detach().contiguous(), gc = dy.detach().contiguous();
    const int64_t N = xc.size(0), d = xc.size(1);
    const double r = global_r(xc, eps);
    double m = 0.0;
    for (int64_t n = 0; n < N; ++n)
        for (int64_t j = 0; j < d; ++j) m += wc.data()[j] * gc.data()[n * d + j] * xc.data()[n * d + j];
    m /= static_cast<double>(N * d);
    RmsNormGrads out{ag::Tensor::zeros({N, d}), ag::Tensor::zeros({d})};
    for (int64_t n = 0; n < N; ++n)
        for (int64_t j = 0; j < d; ++j) {
            const int64_t k = n * d + j;
            out.dx.data()[k] = r * wc.data()[j] * gc.data()[k] - xc.data()[k] * r * r * r * m;
            out.dweight.data()[j] += gc.data()[k] * xc.data()[k] * r;
        }
    return out;
}

}  // namespace ex12
