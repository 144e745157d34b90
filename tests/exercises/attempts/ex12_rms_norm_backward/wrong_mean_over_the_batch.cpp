// Attempt (wrong): takes the mean of x² over the rows (the batch), one r per
// feature as in batch norm, and differentiates that consistently; RMSNorm
// takes it over the d features of each row (each token): one r per row.
#include "exercises/ex12_rms_norm_backward.h"

#include <cmath>
#include <vector>

#include "exercises/not_implemented.h"

namespace ex12 {

namespace {

// r_j = 1 / sqrt(mean_n x[n, j]² + eps) for every feature j.
std::vector<double> feature_scales(const double* x, int64_t N, int64_t d, double eps) {
    std::vector<double> r(static_cast<size_t>(d), 0.0);
    for (int64_t j = 0; j < d; ++j) {
        double ms = 0.0;
        for (int64_t n = 0; n < N; ++n) ms += x[n * d + j] * x[n * d + j];
        r[static_cast<size_t>(j)] = 1.0 / std::sqrt(ms / static_cast<double>(N) + eps);
    }
    return r;
}

}  // namespace

ag::Tensor rms_norm(const ag::Tensor& x, const ag::Tensor& weight, double eps) {
    const ag::Tensor xs = x.detach().contiguous(), ws = weight.detach().contiguous();
    const int64_t N = xs.size(0), d = xs.size(1);
    const std::vector<double> r = feature_scales(xs.data(), N, d, eps);
    ag::Tensor y = ag::Tensor::zeros({N, d});
    for (int64_t n = 0; n < N; ++n)
        for (int64_t j = 0; j < d; ++j)
            y.data()[n * d + j] = xs.data()[n * d + j] * r[static_cast<size_t>(j)] * ws.data()[j];
    const ag::Tensor x_saved = x.detach(), w_saved = weight.detach();
    return ag::record("rms_norm", y, {x, weight}, [x_saved, w_saved, eps](const ag::Tensor& dy) {
        RmsNormGrads g = rms_norm_backward(x_saved, w_saved, eps, dy);
        return std::vector<ag::Tensor>{g.dx, g.dweight};
    });
}

RmsNormGrads rms_norm_backward(const ag::Tensor& x, const ag::Tensor& weight, double eps, const ag::Tensor& dy) {
    const ag::Tensor xs = x.contiguous(), ws = weight.contiguous(), gs = dy.contiguous();
    const int64_t N = xs.size(0), d = xs.size(1);
    const double* px = xs.data();
    const double* pw = ws.data();
    const double* pg = gs.data();
    const std::vector<double> r = feature_scales(px, N, d, eps);
    ag::Tensor dx = ag::Tensor::zeros({N, d}), dw = ag::Tensor::zeros({d});
    for (int64_t j = 0; j < d; ++j) {
        const double rj = r[static_cast<size_t>(j)];
        double dot = 0.0;
        for (int64_t n = 0; n < N; ++n) dot += pw[j] * pg[n * d + j] * px[n * d + j];
        for (int64_t n = 0; n < N; ++n) {
            dx.data()[n * d + j] =
                rj * pw[j] * pg[n * d + j] - px[n * d + j] * rj * rj * rj * dot / static_cast<double>(N);
            dw.data()[j] += pg[n * d + j] * px[n * d + j] * rj;
        }
    }
    return {dx, dw};
}

}  // namespace ex12
