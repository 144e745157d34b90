// Exercise 12 · RMSNorm as an autograd op with a hand-written backward:
// reference solution (lecture §3.2).
#include "exercises/ex12_rms_norm_backward.h"

#include <cmath>
#include <stdexcept>
#include <vector>

namespace ex12 {
namespace {

// r = 1 / sqrt(mean(x²) + eps) of each row of x [N, d] (contiguous).
std::vector<double> inverse_rms(const ag::Tensor& x, double eps) {
    const int64_t N = x.size(0), d = x.size(1);
    const double* px = x.data();
    std::vector<double> r(static_cast<size_t>(N));
    for (int64_t n = 0; n < N; ++n) {
        double ms = 0.0;
        for (int64_t j = 0; j < d; ++j) ms += px[n * d + j] * px[n * d + j];
        r[static_cast<size_t>(n)] = 1.0 / std::sqrt(ms / static_cast<double>(d) + eps);
    }
    return r;
}

}  // namespace

// y = x r ⊙ g, row by row.
ag::Tensor rms_norm(const ag::Tensor& x, const ag::Tensor& weight, double eps) {
    if (x.dim() != 2 || weight.dim() != 1 || weight.size(0) != x.size(1))
        throw std::invalid_argument("rms_norm: needs x [N, d] and weight [d], got " + ag::shape_str(x.shape()) +
                                    " and " + ag::shape_str(weight.shape()));
    const ag::Tensor xs = x.detach().contiguous(), gs = weight.detach().contiguous();
    const int64_t N = xs.size(0), d = xs.size(1);
    const std::vector<double> r = inverse_rms(xs, eps);
    ag::Tensor y = ag::Tensor::zeros({N, d});
    const double *px = xs.data(), *pg = gs.data();
    double* py = y.data();
    for (int64_t n = 0; n < N; ++n)
        for (int64_t j = 0; j < d; ++j) py[n * d + j] = px[n * d + j] * r[static_cast<size_t>(n)] * pg[j];
    return ag::record("rms_norm", y, {x, weight}, [xs, gs, eps](const ag::Tensor& dy) {
        const RmsNormGrads grads = rms_norm_backward(xs, gs, eps, dy);
        return std::vector<ag::Tensor>{grads.dx, grads.dweight};
    });
}

// Per row, with u = g ⊙ dy (the gradient at x r):
//   y_j = x_j r g_j, and r = (mean(x²) + eps)^(-1/2) gives ∂r/∂x_k = -r³ x_k / d, so
//   dx_k = r u_k + Σ_j u_j x_j · (-r³ x_k / d) = r u_k - x_k r³ mean(u ⊙ x),
//   dg_j = Σ_rows dy_j x_j r.
RmsNormGrads rms_norm_backward(const ag::Tensor& x, const ag::Tensor& weight, double eps, const ag::Tensor& dy) {
    const ag::Tensor xs = x.detach().contiguous(), gs = weight.detach().contiguous(), dys = dy.detach().contiguous();
    const int64_t N = xs.size(0), d = xs.size(1);
    const std::vector<double> r = inverse_rms(xs, eps);
    RmsNormGrads out{ag::Tensor::zeros({N, d}), ag::Tensor::zeros({d})};
    const double *px = xs.data(), *pg = gs.data(), *pdy = dys.data();
    double *pdx = out.dx.data(), *pdg = out.dweight.data();
    for (int64_t n = 0; n < N; ++n) {
        const double rn = r[static_cast<size_t>(n)];
        const double *xi = px + n * d, *dyi = pdy + n * d;
        double mean_udx = 0.0;  // mean(g ⊙ dy ⊙ x) over the row
        for (int64_t j = 0; j < d; ++j) mean_udx += pg[j] * dyi[j] * xi[j];
        mean_udx /= static_cast<double>(d);
        for (int64_t j = 0; j < d; ++j) {
            pdx[n * d + j] = rn * pg[j] * dyi[j] - xi[j] * rn * rn * rn * mean_udx;
            pdg[j] += dyi[j] * xi[j] * rn;
        }
    }
    return out;
}

}  // namespace ex12
