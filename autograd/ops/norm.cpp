// LayerNorm and §3.2 RMSNorm over the last dim, fused: each forward saves
// 1/σ per row, and each backward is the closed form below.
#include <cmath>

#include "autograd/ops/common.h"

namespace ag {

using detail::fail;
using detail::Grads;

namespace {

void check_param(const char* op, const char* what, const Tensor& x, const Tensor& p) {
    if (x.dim() == 0) fail(op, "needs at least 1 dim, got a scalar");
    if (p.dim() != 1 || p.size(0) != x.size(-1))
        fail(op, "{} of shape {} for input {} (needs [{}])", what, shape_str(p.shape()), shape_str(x.shape()), x.size(-1));
}

// Σ_rows a[r, j] b[r, j] for each column j: the weight gradient, summed
// over rows in order (d·rows multiply-adds: too few to be worth threads).
Tensor column_dot(const Tensor& a, const Tensor& b, int64_t rows, int64_t d) {
    Tensor out = Tensor::zeros({d});
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t j = 0; j < d; ++j) out.data()[j] += a.data()[r * d + j] * b.data()[r * d + j];
    return out;
}

}  // namespace

// LayerNorm: x̂ = (x - μ) r with r = 1/sqrt(var + eps); y = x̂ ⊙ w + b.
// Backward (per row, n = d):  dx̂ = g ⊙ w,
//   dx = r (dx̂ - mean(dx̂) - x̂ mean(dx̂ ⊙ x̂)),  dw = Σ_rows g ⊙ x̂,  db = Σ_rows g.
Tensor layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps) {
    check_param("layer_norm", "weight", x, weight);
    check_param("layer_norm", "bias", x, bias);
    const int64_t d = x.size(-1), rows = x.numel() / std::max<int64_t>(d, 1);
    const Tensor xc = x.contiguous(), wc = detail::saved(weight), bc = bias.contiguous();
    Tensor y = empty(x.shape()), xhat = empty(x.shape()), rstd = empty({rows});
    detail::parallel_for(rows, 64, [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
            const double* xi = xc.data() + r * d;
            double mu = 0.0, var = 0.0;
            for (int64_t j = 0; j < d; ++j) mu += xi[j];
            mu /= static_cast<double>(d);
            for (int64_t j = 0; j < d; ++j) var += (xi[j] - mu) * (xi[j] - mu);
            const double rs = 1.0 / std::sqrt(var / static_cast<double>(d) + eps);
            rstd.data()[r] = rs;
            for (int64_t j = 0; j < d; ++j) {
                const double h = (xi[j] - mu) * rs;
                xhat.data()[r * d + j] = h;
                y.data()[r * d + j] = h * wc.data()[j] + bc.data()[j];
            }
        }
    });
    return record("layer_norm", y, {x, weight, bias}, [xhat, rstd, wc, rows, d](const Tensor& g) {
        const Tensor gc = g.contiguous();
        Tensor dx = empty(xhat.shape());
        detail::parallel_for(rows, 64, [&](int64_t r0, int64_t r1) {
            for (int64_t r = r0; r < r1; ++r) {
                const double *gi = gc.data() + r * d, *hi = xhat.data() + r * d;
                double mean_dh = 0.0, mean_dh_h = 0.0;
                for (int64_t j = 0; j < d; ++j) {
                    const double dh = gi[j] * wc.data()[j];
                    mean_dh += dh;
                    mean_dh_h += dh * hi[j];
                }
                mean_dh /= static_cast<double>(d);
                mean_dh_h /= static_cast<double>(d);
                for (int64_t j = 0; j < d; ++j)
                    dx.data()[r * d + j] = rstd.data()[r] * (gi[j] * wc.data()[j] - mean_dh - hi[j] * mean_dh_h);
            }
        });
        return Grads{dx, column_dot(gc, xhat, rows, d), sum_to(gc, {d})};
    });
}

// §3.2 RMSNorm: y = x r ⊙ w with r = 1/sqrt(mean(x²) + eps). No centring,
// no bias. Backward (per row):  dx = r (g⊙w - x r² mean(g⊙w⊙x)),  dw = Σ_rows g ⊙ x r.
Tensor rms_norm(const Tensor& x, const Tensor& weight, double eps) {
    check_param("rms_norm", "weight", x, weight);
    const int64_t d = x.size(-1), rows = x.numel() / std::max<int64_t>(d, 1);
    const Tensor xc = detail::saved(x), wc = detail::saved(weight);
    Tensor y = empty(x.shape()), rstd = empty({rows});
    detail::parallel_for(rows, 64, [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
            const double* xi = xc.data() + r * d;
            double ms = 0.0;
            for (int64_t j = 0; j < d; ++j) ms += xi[j] * xi[j];
            const double rs = 1.0 / std::sqrt(ms / static_cast<double>(d) + eps);
            rstd.data()[r] = rs;
            for (int64_t j = 0; j < d; ++j) y.data()[r * d + j] = xi[j] * rs * wc.data()[j];
        }
    });
    return record("rms_norm", y, {x, weight}, [xc, wc, rstd, rows, d](const Tensor& g) {
        const Tensor gc = g.contiguous();
        Tensor dx = empty(xc.shape()), xr = empty(xc.shape());  // xr = x r, the normalised input
        detail::parallel_for(rows, 64, [&](int64_t r0, int64_t r1) {
            for (int64_t r = r0; r < r1; ++r) {
                const double *gi = gc.data() + r * d, *xi = xc.data() + r * d;
                const double rs = rstd.data()[r];
                double mean_gwx = 0.0;
                for (int64_t j = 0; j < d; ++j) mean_gwx += gi[j] * wc.data()[j] * xi[j];
                mean_gwx /= static_cast<double>(d);
                for (int64_t j = 0; j < d; ++j) {
                    dx.data()[r * d + j] = rs * (gi[j] * wc.data()[j] - xi[j] * rs * rs * mean_gwx);
                    xr.data()[r * d + j] = xi[j] * rs;
                }
            }
        });
        return Grads{dx, column_dot(gc, xr, rows, d)};
    });
}

}  // namespace ag
