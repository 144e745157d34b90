// LayerNorm and §3.2 RMSNorm over the last dim, fused: each forward saves
// 1/σ per row, and each backward is the closed form below.
#include <cmath>
#include <vector>

#include "autograd/kernels/reduce.h"
#include "autograd/ops/common.h"

namespace ag {

using detail::fail;
using detail::Grads;

namespace {

void check_param(const char* op, const char* what, const Tensor& x, const Tensor& p) {
    if (!x.defined() || !p.defined()) fail(op, "{} is an undefined tensor", x.defined() ? what : "the input");
    if (x.dim() == 0) fail(op, "needs at least 1 dim, got a scalar");
    if (p.dim() != 1 || p.size(0) != x.size(-1))
        fail(op, "{} of shape {} for input {} (needs [{}])", what, shape_str(p.shape()), shape_str(x.shape()),
             x.size(-1));
}

// Σ_rows a[r, j] b[r, j] s_r for each column j, s_r = scale[r] (1 without
// scale): the weight gradient, summed over rows in order (d·rows
// multiply-adds: too few to be worth threads).
Tensor column_dot(const Tensor& a, const Tensor& b, int64_t rows, int64_t d, const double* scale = nullptr) {
    Tensor out = Tensor::zeros({d});
    const double *pa = a.data(), *pb = b.data();
    double* po = out.data();
    for (int64_t r = 0; r < rows; ++r) {
        const double *ar = pa + r * d, *br = pb + r * d;
        if (scale) {
            for (int64_t j = 0; j < d; ++j) po[j] += ar[j] * (br[j] * scale[r]);
        } else {
            for (int64_t j = 0; j < d; ++j) po[j] += ar[j] * br[j];
        }
    }
    return out;
}

// eps keeps 1/sqrt(var + eps) finite for a constant row: a number >= 0 (a
// negative or NaN one would turn such rows into NaN).
void check_eps(const char* op, double eps) {
    if (!(eps >= 0.0) || !std::isfinite(eps)) fail(op, "eps must be finite and >= 0, got {}", eps);
}

}  // namespace

// LayerNorm: x̂ = (x - μ) r with r = 1/sqrt(var + eps); y = x̂ ⊙ w + b.
// Backward (per row, n = d):  dx̂ = g ⊙ w,
//   dx = r (dx̂ - mean(dx̂) - x̂ mean(dx̂ ⊙ x̂)),  dw = Σ_rows g ⊙ x̂,  db = Σ_rows g.
Tensor layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps) {
    check_param("layer_norm", "weight", x, weight);
    check_param("layer_norm", "bias", x, bias);
    check_eps("layer_norm", eps);
    const int64_t d = x.size(-1), rows = x.numel() / std::max<int64_t>(d, 1);
    const Tensor xc = x.contiguous(), wc = detail::saved(weight), bc = bias.contiguous();
    Tensor y = empty(x.shape()), xhat = empty(x.shape()), rstd = empty({rows});
    const double *px = xc.data(), *pw = wc.data(), *pb = bc.data();
    double *py = y.data(), *ph = xhat.data(), *pr = rstd.data();
    const double n = static_cast<double>(d);
    detail::parallel_for(rows, 64, [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
            const double* xi = px + r * d;
            const double mu = kernels::sum(xi, d) / n;
            const double rs = 1.0 / std::sqrt(kernels::sum_sq_dev(xi, mu, d) / n + eps);
            pr[r] = rs;
            double *hi = ph + r * d, *yi = py + r * d;
            for (int64_t j = 0; j < d; ++j) {
                hi[j] = (xi[j] - mu) * rs;
                yi[j] = hi[j] * pw[j] + pb[j];
            }
        }
    });
    return record("layer_norm", y, {x, weight, bias}, [xhat, rstd, wc, rows, d](const Tensor& g) {
        const Tensor gc = g.contiguous();
        Tensor dx = empty(xhat.shape());
        const double *pg = gc.data(), *pxh = xhat.data(), *prs = rstd.data(), *pwt = wc.data();
        double* pdx = dx.data();
        const double nd = static_cast<double>(d);
        detail::parallel_for(rows, 64, [&](int64_t r0, int64_t r1) {
            std::vector<double> dh(static_cast<size_t>(d));  // dx̂ = g ⊙ w, one row at a time
            for (int64_t r = r0; r < r1; ++r) {
                const double *gi = pg + r * d, *hi = pxh + r * d;
                for (int64_t j = 0; j < d; ++j) dh[j] = gi[j] * pwt[j];
                const double mean_dh = kernels::sum(dh.data(), d) / nd, mean_dh_h = kernels::dot(dh.data(), hi, d) / nd;
                double* dxi = pdx + r * d;
                for (int64_t j = 0; j < d; ++j) dxi[j] = prs[r] * (dh[j] - mean_dh - hi[j] * mean_dh_h);
            }
        });
        return Grads{dx, column_dot(gc, xhat, rows, d), sum_to(gc, {d})};
    });
}

// §3.2 RMSNorm: y = x r ⊙ w with r = 1/sqrt(mean(x²) + eps). No centring,
// no bias. Backward (per row):  dx = r (g⊙w - x r² mean(g⊙w⊙x)),  dw = Σ_rows g ⊙ x r.
Tensor rms_norm(const Tensor& x, const Tensor& weight, double eps) {
    check_param("rms_norm", "weight", x, weight);
    check_eps("rms_norm", eps);
    const int64_t d = x.size(-1), rows = x.numel() / std::max<int64_t>(d, 1);
    const Tensor xc = detail::saved(x), wc = detail::saved(weight);
    Tensor y = empty(x.shape()), rstd = empty({rows});
    const double *px = xc.data(), *pw = wc.data();
    double *py = y.data(), *pr = rstd.data();
    const double n = static_cast<double>(d);
    detail::parallel_for(rows, 64, [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
            const double* xi = px + r * d;
            const double rs = 1.0 / std::sqrt(kernels::dot(xi, xi, d) / n + eps);
            pr[r] = rs;
            double* yi = py + r * d;
            for (int64_t j = 0; j < d; ++j) yi[j] = xi[j] * rs * pw[j];
        }
    });
    return record("rms_norm", y, {x, weight}, [xc, wc, rstd, rows, d](const Tensor& g) {
        const Tensor gc = g.contiguous();
        Tensor dx = empty(xc.shape());
        const double *pg = gc.data(), *pxs = xc.data(), *prs = rstd.data(), *pwt = wc.data();
        double* pdx = dx.data();
        const double nd = static_cast<double>(d);
        detail::parallel_for(rows, 64, [&](int64_t r0, int64_t r1) {
            std::vector<double> gw(static_cast<size_t>(d));  // g ⊙ w, one row at a time
            for (int64_t r = r0; r < r1; ++r) {
                const double *gi = pg + r * d, *xi = pxs + r * d;
                for (int64_t j = 0; j < d; ++j) gw[j] = gi[j] * pwt[j];
                const double rs = prs[r], mean_gwx = kernels::dot(gw.data(), xi, d) / nd;
                double* dxi = pdx + r * d;
                for (int64_t j = 0; j < d; ++j) dxi[j] = rs * (gw[j] - xi[j] * rs * rs * mean_gwx);
            }
        });
        return Grads{dx, column_dot(gc, xc, rows, d, prs)};  // dw = Σ_rows g ⊙ (x r)
    });
}

}  // namespace ag
