// Softmax, log-softmax and the losses. All work row by row over the last
// dim; rows are independent, so threads split the rows.
#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "autograd/kernels/reduce.h"
#include "autograd/kernels/vmath.h"
#include "autograd/ops/common.h"

namespace ag {

using detail::fail;
using detail::Grads;

namespace {

// Rows of the last dim: x viewed as [rows, n].
struct Rows {
    int64_t rows, n;
};

Rows rows_of(const char* op, const Tensor& x) {
    if (x.dim() == 0) fail(op, "needs at least 1 dim, got a scalar");
    const int64_t n = x.size(-1);
    if (n == 0) fail(op, "the last dim of {} is empty", shape_str(x.shape()));
    return {x.numel() / n, n};
}

// Row-wise over [rows, n]: body(row pointer(s), r).
template <typename Body>
void for_rows(const Rows& r, Body&& body) {
    detail::parallel_for(r.rows, std::max<int64_t>(1, 4096 / r.n), [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) body(i);
    });
}

// A row's max m and Σ_j exp(x_j - m): then softmax_j = exp(x_j - m) / sum
// and log Σ exp = m + log(sum). Shifting by the max keeps exp from
// overflowing, and exp(x_j - m) / sum stays accurate to the last bits even
// for |x| ~ 1000 (exp(x_j - logsumexp) would not: the rounding of a large
// logsumexp is amplified by exp).
struct RowExp {
    double max, sum;
    double lse() const { return max + std::log(sum); }
    AG_ELEMENTWISE double prob(double x) const { return vmath::exp(x - max) / sum; }
};

// The max is exact in any order, so it is taken in vector lanes
// (kernels::max; only the sign of a zero maximum could change, and
// exp(x - m) and m + log(sum) are the same for m = ±0). The exponentials are
// computed in one vectorised loop into a scratch row, then summed in j
// order (a reordered sum rounds differently): the same bits as one scalar
// loop doing all three.
RowExp row_exp(const double* x, int64_t n) {
    const double m = kernels::max(x, n);
    thread_local std::vector<double> scratch;
    if (static_cast<int64_t>(scratch.size()) < n) scratch.resize(static_cast<size_t>(n));
    double* e = scratch.data();
#pragma omp simd
    for (int64_t j = 0; j < n; ++j) e[j] = vmath::exp(x[j] - m);
    double s = 0.0;
    for (int64_t j = 0; j < n; ++j) s += e[j];
    return {m, s};
}

}  // namespace

// y_j = exp(x_j) / Σ_k exp(x_k);  dx = y ⊙ (g - Σ_k g_k y_k)
Tensor softmax(const Tensor& x) {
    const Rows r = rows_of("softmax", x);
    const Tensor xc = x.contiguous();
    Tensor y = empty(x.shape());
    for_rows(r, [&](int64_t i) {
        const double* xi = xc.data() + i * r.n;
        double* yi = y.data() + i * r.n;
        const RowExp e = row_exp(xi, r.n);
#pragma omp simd
        for (int64_t j = 0; j < r.n; ++j) yi[j] = e.prob(xi[j]);
    });
    return record("softmax", y, {x}, [r, y = y.detach()](const Tensor& g) {
        const Tensor gc = g.contiguous();
        Tensor dx = empty(y.shape());
        for_rows(r, [&](int64_t i) {
            const double *gi = gc.data() + i * r.n, *yi = y.data() + i * r.n;
            double dot = 0.0;
            for (int64_t j = 0; j < r.n; ++j) dot += gi[j] * yi[j];
            for (int64_t j = 0; j < r.n; ++j) dx.data()[i * r.n + j] = yi[j] * (gi[j] - dot);
        });
        return Grads{dx};
    });
}

// y_j = x_j - log Σ_k exp(x_k);  dx = g - softmax(x) Σ_k g_k
Tensor log_softmax(const Tensor& x) {
    const Rows r = rows_of("log_softmax", x);
    const Tensor xc = x.contiguous();
    Tensor y = empty(x.shape());
    for_rows(r, [&](int64_t i) {
        const double* xi = xc.data() + i * r.n;
        const double lse = row_exp(xi, r.n).lse();
        for (int64_t j = 0; j < r.n; ++j) y.data()[i * r.n + j] = xi[j] - lse;
    });
    return record("log_softmax", y, {x}, [r, y = y.detach()](const Tensor& g) {
        const Tensor gc = g.contiguous();
        Tensor dx = empty(y.shape());
        for_rows(r, [&](int64_t i) {
            const double *gi = gc.data() + i * r.n, *yi = y.data() + i * r.n;
            double total = 0.0;
            for (int64_t j = 0; j < r.n; ++j) total += gi[j];
            for (int64_t j = 0; j < r.n; ++j) dx.data()[i * r.n + j] = gi[j] - vmath::exp(yi[j]) * total;
        });
        return Grads{dx};
    });
}

// Cross-entropy, fused with log-softmax: for the n rows whose target t is
// not ignore_index, L = (1/n) Σ_rows (log Σ_j exp(x_j) - x_t), and
// dL/dx_j = (softmax(x)_j - 1[j = t]) / n; ignored rows get no gradient.
Tensor cross_entropy(const Tensor& logits, const Tensor& targets, int64_t ignore_index) {
    if (logits.dim() != 2) fail("cross_entropy", "logits must be [N, C], got {}", shape_str(logits.shape()));
    if (targets.dim() != 1 || targets.size(0) != logits.size(0))
        fail("cross_entropy", "logits {} need targets [{}], got {}", shape_str(logits.shape()), logits.size(0),
             shape_str(targets.shape()));
    const Rows r = rows_of("cross_entropy", logits);
    std::vector<int64_t> t;
    int64_t count = 0;
    for (double v : targets.to_vector()) {
        const bool ignored = v == static_cast<double>(ignore_index);
        if (!ignored && (!(v >= 0 && v < static_cast<double>(r.n)) || v != std::floor(v)))
            fail("cross_entropy", "target {} is not a class in [0, {}) nor ignore_index {}", v, r.n, ignore_index);
        t.push_back(ignored ? -1 : static_cast<int64_t>(v));
        count += ignored ? 0 : 1;
    }
    if (t.empty()) fail("cross_entropy", "no targets: logits {} hold no row", shape_str(logits.shape()));
    if (count == 0) fail("cross_entropy", "every one of the {} targets is ignore_index {}", t.size(), ignore_index);
    const Tensor xc = detail::saved(logits);
    std::vector<double> row_loss(static_cast<size_t>(r.rows), 0.0);
    auto exps = std::make_shared<std::vector<RowExp>>(static_cast<size_t>(r.rows));  // for the backward
    for_rows(r, [&](int64_t i) {
        const int64_t ti = t[static_cast<size_t>(i)];
        if (ti < 0) return;
        const RowExp e = row_exp(xc.data() + i * r.n, r.n);
        (*exps)[static_cast<size_t>(i)] = e;
        row_loss[static_cast<size_t>(i)] = e.lse() - xc.data()[i * r.n + ti];
    });
    double total = 0.0;  // summed in row order: the same for any thread count
    for (double l : row_loss) total += l;
    Tensor loss = Tensor::scalar(total / static_cast<double>(count));
    return record("cross_entropy", loss, {logits}, [xc, t, r, count, exps](const Tensor& g) {
        const double scale = g.item() / static_cast<double>(count);
        Tensor dx = empty(xc.shape());
        for_rows(r, [&](int64_t i) {
            const double* xi = xc.data() + i * r.n;
            double* di = dx.data() + i * r.n;
            const int64_t ti = t[static_cast<size_t>(i)];
            if (ti < 0) {
                std::fill_n(di, r.n, 0.0);
                return;
            }
            const RowExp e = (*exps)[static_cast<size_t>(i)];  // the forward's max and sum
#pragma omp simd
            for (int64_t j = 0; j < r.n; ++j) di[j] = scale * (e.prob(xi[j]) - (j == ti ? 1.0 : 0.0));
        });
        return Grads{dx};
    });
}

// L = mean((p - t)²);  dL/dp = 2 (p - t) / n = -dL/dt
Tensor mse_loss(const Tensor& prediction, const Tensor& target) {
    if (prediction.shape() != target.shape())
        fail("mse_loss", "prediction {} and target {} differ", shape_str(prediction.shape()),
             shape_str(target.shape()));
    if (prediction.numel() == 0) fail("mse_loss", "of empty tensors {}", shape_str(prediction.shape()));
    const Tensor diff = detail::zip(prediction, target, [](double p, double t) { return p - t; });
    double total = 0.0;
    for (int64_t i = 0; i < diff.numel(); ++i) total += diff.data()[i] * diff.data()[i];
    const double n = static_cast<double>(diff.numel());
    Tensor loss = Tensor::scalar(total / n);
    return record("mse_loss", loss, {prediction, target}, [diff, n](const Tensor& g) {
        const Tensor dp = diff * (2.0 * g.item() / n);
        return Grads{dp, neg(dp)};
    });
}

// L = mean(-t log σ(a) - (1 - t) log(1 - σ(a))). With log σ(a) = -softplus(-a)
// and log(1 - σ(a)) = -softplus(a), the summand is softplus(a) - t a, written
// max(a, 0) - t a + log1p(exp(-|a|)) so that exp never overflows.
//   dL/da = (σ(a) - t) / n,  dL/dt = -a / n
Tensor binary_cross_entropy_with_logits(const Tensor& logits, const Tensor& target) {
    const char* op = "binary_cross_entropy_with_logits";
    if (logits.shape() != target.shape())
        fail(op, "logits {} and target {} differ", shape_str(logits.shape()), shape_str(target.shape()));
    if (logits.numel() == 0) fail(op, "of empty tensors {}", shape_str(logits.shape()));
    const Tensor a = logits.contiguous().detach(), t = target.contiguous().detach();
    const Tensor terms = detail::zip(a, t, [](double x, double y) AG_ELEMENTWISE {
        return std::max(x, 0.0) - y * x + vmath::log1p(vmath::exp(-std::fabs(x)));
    });
    double total = 0.0;
    for (int64_t i = 0; i < terms.numel(); ++i) total += terms.data()[i];
    const double n = static_cast<double>(terms.numel());
    Tensor loss = Tensor::scalar(total / n);
    return record(op, loss, {logits, target}, [a, t, n](const Tensor& g) {
        const double scale = g.item() / n;
        const Tensor da = detail::zip(a, t, [scale](double x, double y) { return (vmath::sigmoid(x) - y) * scale; });
        return Grads{da, a * -scale};
    });
}

}  // namespace ag
