// Attempt (wrong): differentiates r = (mean(x²) + eps)^(-1/2) as
// -(mean(x²) + eps)^(-3/2) · 2x_k / d, dropping the 1/2 of the power rule,
// so the second term of dx is twice too large.
#include "exercises/ex12_rms_norm_backward.h"

#include <cmath>
#include <vector>

#include "exercises/not_implemented.h"

namespace ex12 {

namespace {

std::vector<double> rs_of(const ag::Tensor& xc, double eps) {
    const int64_t N = xc.size(0), d = xc.size(1);
    std::vector<double> rs;
    for (int64_t n = 0; n < N; ++n) {
        double ms = 0.0;
        for (int64_t j = 0; j < d; ++j) ms += xc.data()[n * d + j] * xc.data()[n * d + j] / static_cast<double>(d);
        rs.push_back(1.0 / std::sqrt(ms + eps));
    }
    return rs;
}

}  // namespace

ag::Tensor rms_norm(const ag::Tensor& x, const ag::Tensor& weight, double eps) {
    const ag::Tensor xc = x.detach().contiguous(), wc = weight.detach().contiguous();
    const int64_t N = xc.size(0), d = xc.size(1);
    const std::vector<double> rs = rs_of(xc, eps);
    std::vector<double> y;
    for (int64_t n = 0; n < N; ++n)
        for (int64_t j = 0; j < d; ++j) y.push_back(xc.data()[n * d + j] * rs[static_cast<size_t>(n)] * wc.data()[j]);
    return ag::record("rms_norm", ag::Tensor::from({N, d}, y), {x, weight}, [xc, wc, eps](const ag::Tensor& dy) {
        const RmsNormGrads g = rms_norm_backward(xc, wc, eps, dy);
        return std::vector<ag::Tensor>{g.dx, g.dweight};
    });
}

RmsNormGrads rms_norm_backward(const ag::Tensor& x, const ag::Tensor& weight, double eps, const ag::Tensor& dy) {
    const ag::Tensor xc = x.detach().contiguous(), wc = weight.detach().contiguous(), gc = dy.detach().contiguous();
    const int64_t N = xc.size(0), d = xc.size(1);
    const std::vector<double> rs = rs_of(xc, eps);
    std::vector<double> dx, dw(static_cast<size_t>(d), 0.0);
    for (int64_t n = 0; n < N; ++n) {
        const double r = rs[static_cast<size_t>(n)];
        // ∂r/∂x_k = -(ms + eps)^(-3/2) · 2 x_k / d = -2 r³ x_k / d
        double s = 0.0;
        for (int64_t j = 0; j < d; ++j) s += wc.data()[j] * gc.data()[n * d + j] * xc.data()[n * d + j];
        for (int64_t k = 0; k < d; ++k)
            dx.push_back(r * wc.data()[k] * gc.data()[n * d + k] -
                         2.0 * r * r * r * xc.data()[n * d + k] * s / static_cast<double>(d));
        for (int64_t j = 0; j < d; ++j) dw[static_cast<size_t>(j)] += gc.data()[n * d + j] * xc.data()[n * d + j] * r;
    }
    return {ag::Tensor::from({N, d}, dx), ag::Tensor::from({d}, dw)};
}

}  // namespace ex12
