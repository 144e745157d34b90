// Attempt (wrong): copies x and the weight with contiguous(), but reads the
// incoming gradient straight from dy.data(), as if every gradient arrived as
// a fresh contiguous tensor (through a transpose or a view it does not).
#include "exercises/ex12_rms_norm_backward.h"

#include <cmath>
#include <vector>

#include "exercises/not_implemented.h"

namespace ex12 {

namespace {

double row_r(const double* row, int64_t d, double eps) {
    double s = 0.0;
    for (int64_t j = 0; j < d; ++j) s += row[j] * row[j];
    return 1.0 / std::sqrt(s / static_cast<double>(d) + eps);
}

}  // namespace

ag::Tensor rms_norm(const ag::Tensor& x, const ag::Tensor& weight, double eps) {
    const ag::Tensor xc = x.detach().contiguous(), wc = weight.detach().contiguous();
    const int64_t N = xc.size(0), d = xc.size(1);
    std::vector<double> y(static_cast<size_t>(N * d));
    for (int64_t n = 0; n < N; ++n) {
        const double r = row_r(xc.data() + n * d, d, eps);
        for (int64_t j = 0; j < d; ++j) y[static_cast<size_t>(n * d + j)] = xc.data()[n * d + j] * r * wc.data()[j];
    }
    return ag::record("rms_norm", ag::Tensor::from({N, d}, y), {x, weight}, [xc, wc, eps](const ag::Tensor& dy) {
        const RmsNormGrads g = rms_norm_backward(xc, wc, eps, dy);
        return std::vector<ag::Tensor>{g.dx, g.dweight};
    });
}

RmsNormGrads rms_norm_backward(const ag::Tensor& x, const ag::Tensor& weight, double eps, const ag::Tensor& dy) {
    const ag::Tensor xc = x.detach().contiguous(), wc = weight.detach().contiguous();
    const int64_t N = xc.size(0), d = xc.size(1);
    const double *px = xc.data(), *pw = wc.data(), *pdy = dy.data();
    std::vector<double> dx(static_cast<size_t>(N * d)), dw(static_cast<size_t>(d), 0.0);
    for (int64_t n = 0; n < N; ++n) {
        const double r = row_r(px + n * d, d, eps);
        double m = 0.0;
        for (int64_t j = 0; j < d; ++j) m += pw[j] * pdy[n * d + j] * px[n * d + j];
        m /= static_cast<double>(d);
        for (int64_t j = 0; j < d; ++j) {
            dx[static_cast<size_t>(n * d + j)] = r * pw[j] * pdy[n * d + j] - px[n * d + j] * r * r * r * m;
            dw[static_cast<size_t>(j)] += pdy[n * d + j] * px[n * d + j] * r;
        }
    }
    return {ag::Tensor::from({N, d}, dx), ag::Tensor::from({d}, dw)};
}

}  // namespace ex12
