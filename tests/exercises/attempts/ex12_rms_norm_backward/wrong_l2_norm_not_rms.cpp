// Attempt (wrong): normalises each row to unit length, r = 1 / sqrt(Σ x² +
// eps) (the L2 norm); RMSNorm divides by the ROOT MEAN square, so the row
// ends with mean(y²) ≈ 1, not Σ y² = 1 (the backward is consistent with it).
#include "exercises/ex12_rms_norm_backward.h"

#include <cmath>

#include "exercises/not_implemented.h"

namespace ex12 {

ag::Tensor rms_norm(const ag::Tensor& x, const ag::Tensor& weight, double eps) {
    const ag::Tensor xs = x.detach().contiguous(), ws = weight.detach().contiguous();
    const int64_t N = xs.size(0), d = xs.size(1);
    ag::Tensor y = ag::Tensor::zeros({N, d});
    const double* px = xs.data();
    const double* pw = ws.data();
    double* py = y.data();
    for (int64_t n = 0; n < N; ++n) {
        double ms = 0.0;
        for (int64_t j = 0; j < d; ++j) ms += px[n * d + j] * px[n * d + j];
        const double r = 1.0 / std::sqrt(ms + eps);
        for (int64_t j = 0; j < d; ++j) py[n * d + j] = px[n * d + j] * r * pw[j];
    }
    const ag::Tensor x_saved = x.detach(), w_saved = weight.detach();
    return ag::record("rms_norm", y, {x, weight}, [x_saved, w_saved, eps](const ag::Tensor& dy) {
        RmsNormGrads g = rms_norm_backward(x_saved, w_saved, eps, dy);
        return std::vector<ag::Tensor>{g.dx, g.dweight};
    });
}

RmsNormGrads rms_norm_backward(const ag::Tensor& x, const ag::Tensor& weight, double eps, const ag::Tensor& dy) {
    const ag::Tensor xs = x.contiguous(), ws = weight.contiguous(), gs = dy.contiguous();
    const int64_t N = xs.size(0), d = xs.size(1);
    ag::Tensor dx = ag::Tensor::zeros({N, d}), dw = ag::Tensor::zeros({d});
    const double* px = xs.data();
    const double* pw = ws.data();
    const double* pg = gs.data();
    double* pdx = dx.data();
    double* pdw = dw.data();
    for (int64_t n = 0; n < N; ++n) {
        double ms = 0.0;
        for (int64_t j = 0; j < d; ++j) ms += px[n * d + j] * px[n * d + j];
        const double r = 1.0 / std::sqrt(ms + eps);
        double dot = 0.0;  // Σ_j g_j dy_j x_j
        for (int64_t j = 0; j < d; ++j) dot += pw[j] * pg[n * d + j] * px[n * d + j];
        const double m = dot;
        for (int64_t j = 0; j < d; ++j) {
            pdx[n * d + j] = r * pw[j] * pg[n * d + j] - px[n * d + j] * r * r * r * m;
            pdw[j] += pg[n * d + j] * px[n * d + j] * r;
        }
    }
    return {dx, dw};
}

}  // namespace ex12
