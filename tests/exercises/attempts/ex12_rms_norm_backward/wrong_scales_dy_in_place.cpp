// Attempt (wrong): the backward first turns dy into u = g ⊙ dy in place, then
// dx = r u - x r³ mean(u ⊙ x); dy.contiguous() is dy's own storage, so the
// incoming gradient (which the engine may hand to other ops too) is changed.
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
        const double r = 1.0 / std::sqrt(ms / static_cast<double>(d) + eps);
        for (int64_t j = 0; j < d; ++j) py[n * d + j] = px[n * d + j] * r * pw[j];
    }
    const ag::Tensor x_saved = x.detach(), w_saved = weight.detach();
    return ag::record("rms_norm", y, {x, weight}, [x_saved, w_saved, eps](const ag::Tensor& dy) {
        RmsNormGrads g = rms_norm_backward(x_saved, w_saved, eps, dy);
        return std::vector<ag::Tensor>{g.dx, g.dweight};
    });
}

RmsNormGrads rms_norm_backward(const ag::Tensor& x, const ag::Tensor& weight, double eps, const ag::Tensor& dy) {
    const ag::Tensor xs = x.contiguous(), ws = weight.contiguous();
    ag::Tensor gs = dy.contiguous();
    const int64_t N = xs.size(0), d = xs.size(1);
    ag::Tensor dx = ag::Tensor::zeros({N, d}), dw = ag::Tensor::zeros({d});
    const double* px = xs.data();
    const double* pw = ws.data();
    double* pu = gs.data();  // becomes u = g ⊙ dy
    double* pdx = dx.data();
    double* pdw = dw.data();
    for (int64_t n = 0; n < N; ++n) {
        double ms = 0.0;
        for (int64_t j = 0; j < d; ++j) ms += px[n * d + j] * px[n * d + j];
        const double r = 1.0 / std::sqrt(ms / static_cast<double>(d) + eps);
        double m = 0.0;  // mean(u ⊙ x)
        for (int64_t j = 0; j < d; ++j) {
            pdw[j] += pu[n * d + j] * px[n * d + j] * r;  // before dy becomes u
            pu[n * d + j] *= pw[j];
            m += pu[n * d + j] * px[n * d + j] / static_cast<double>(d);
        }
        for (int64_t j = 0; j < d; ++j) pdx[n * d + j] = r * pu[n * d + j] - px[n * d + j] * r * r * r * m;
    }
    return {dx, dw};
}

}  // namespace ex12
