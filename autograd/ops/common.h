#pragma once
// Shared by the ops' .cpp files: errors, dims, broadcasting and the two
// loop shapes every pointwise kernel is built from.
#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

#include <fmt/format.h>
#include "autograd/engine.h"
#include "autograd/ops.h"
#include "autograd/tensor.h"
#include "autograd/thread_pool.h"

// For the per-element lambdas of pointwise kernels: inlined into the loop,
// so that the loop vectorises (GCC otherwise may keep a big lambda, such as
// GELU's erf, as a call per element).
#define AG_ELEMENTWISE __attribute__((always_inline))

namespace ag::detail {

// throw std::invalid_argument("op: message")
template <typename... Args>
[[noreturn]] void fail(const char* op, fmt::format_string<Args...> format, Args&&... args) {
    throw std::invalid_argument(std::string(op) + ": " + fmt::format(format, std::forward<Args>(args)...));
}

// A dim of a tensor of this shape, in [-ndim, ndim), as an index in
// [0, ndim). `extra` allows dims past the end (stack inserts a new one).
inline int64_t wrap_dim(const char* op, int64_t d, const Shape& shape, int64_t extra = 0) {
    const int64_t ndim = static_cast<int64_t>(shape.size()) + extra;
    if (d < -ndim || d >= ndim) fail(op, "dim {} out of range for shape {}", d, shape_str(shape));
    return d < 0 ? d + ndim : d;
}

// NumPy broadcasting: align on the right; sizes must match or be 1. (The
// result may be too large for a tensor: numel_of checks it, under the
// caller's name.)
Shape broadcast_shapes(const char* op, const Shape& a, const Shape& b);

// The rows of x (at least 1-D) seen as a matrix [rows, x.size(-1)]: the
// product of its leading dims (not numel / size(-1), 0 when the last dim is).
inline int64_t leading_rows(const Tensor& x) { return numel_of(Shape(x.shape().begin(), x.shape().end() - 1)); }

// A view of x stretched to `shape` (stride 0 along broadcast dims); no copy.
Tensor expand_view(const Tensor& x, const Shape& shape);

// parallel_for(n, min_per_thread, body): autograd/thread_pool.h.
using ag::parallel_for;

constexpr int64_t kPointwiseGrain = 1 << 12;  // elements per thread at least

// map's and zip's loops are `#pragma omp simd`: f must vectorise
// (arithmetic, vmath's functions; Clang warns when a loop does not, so its
// build checks this). An f that cannot, a libm call such as std::pow, asks
// for a plain loop with Loop::Scalar.
enum class Loop { Simd, Scalar };

// y[i] = f(x[i]) for a tensor of any layout; the result is contiguous.
template <Loop loop = Loop::Simd, typename F>
Tensor map(const Tensor& x, F f) {
    const Tensor xc = x.contiguous();
    Tensor y = empty(x.shape());
    const double* px = xc.data();
    double* py = y.data();
    // (the lambdas copy the pointers they capture: a loop that reads them
    // through the closure does not vectorise)
    parallel_for(y.numel(), kPointwiseGrain, [&, px, py](int64_t b, int64_t e) {
        if constexpr (loop == Loop::Simd) {
#pragma omp simd
            for (int64_t i = b; i < e; ++i) py[i] = f(px[i]);
        } else {
            for (int64_t i = b; i < e; ++i) py[i] = f(px[i]);
        }
    });
    return y;
}

// out[i] = f(a[i], b[i]) for two tensors of the SAME shape (a backward's
// gradient and a saved input, typically).
template <Loop loop = Loop::Simd, typename F>
Tensor zip(const Tensor& a, const Tensor& b, F f) {
    const Tensor ac = a.contiguous(), bc = b.contiguous();
    Tensor out = empty(a.shape());
    const double *pa = ac.data(), *pb = bc.data();
    double* po = out.data();
    parallel_for(out.numel(), kPointwiseGrain, [&, pa, pb, po](int64_t s, int64_t e) {
        if constexpr (loop == Loop::Simd) {
#pragma omp simd
            for (int64_t i = s; i < e; ++i) po[i] = f(pa[i], pb[i]);
        } else {
            for (int64_t i = s; i < e; ++i) po[i] = f(pa[i], pb[i]);
        }
    });
    return out;
}

// The same with broadcasting: out has the broadcast shape of a and b.
template <typename F>
Tensor broadcast_zip(const char* op, const Tensor& a, const Tensor& b, F f) {
    if (a.shape() == b.shape()) return zip(a, b, f);
    const Shape shape = broadcast_shapes(op, a.shape(), b.shape());
    if (b.numel() == 1 && a.shape() == shape) {
        const double s = b.contiguous().data()[0];
        return map(a, [&](double x) { return f(x, s); });
    }
    if (a.numel() == 1 && b.shape() == shape) {
        const double s = a.contiguous().data()[0];
        return map(b, [&](double x) { return f(s, x); });
    }
    // General case: read both through stride-0 views, one row at a time.
    Tensor out = empty(shape, op);
    const Tensor av = expand_view(a.contiguous(), shape), bv = expand_view(b.contiguous(), shape);
    const int64_t nd = static_cast<int64_t>(shape.size());
    const int64_t inner = nd ? shape.back() : 1;
    const int64_t rows = inner ? out.numel() / inner : 0;
    const int64_t sa = nd ? av.strides().back() : 0, sb = nd ? bv.strides().back() : 0;
    const double *pa = av.data(), *pb = bv.data();
    double* po = out.data();
    parallel_for(rows, std::max<int64_t>(1, kPointwiseGrain / std::max<int64_t>(inner, 1)),
                 [&](int64_t r0, int64_t r1) {
                     for (int64_t r = r0; r < r1; ++r) {
                         int64_t oa = 0, ob = 0, rest = r;  // offsets of row r in a and b
                         for (int64_t d = nd - 2; d >= 0; --d) {
                             const int64_t i = rest % shape[d];
                             rest /= shape[d];
                             oa += i * av.strides()[d];
                             ob += i * bv.strides()[d];
                         }
                         for (int64_t j = 0; j < inner; ++j) po[r * inner + j] = f(pa[oa + j * sa], pb[ob + j * sb]);
                     }
                 });
    return out;
}

// The numbers of x, contiguous, without its history: what a backward
// closure saves (saving x itself would keep a needless copy node alive).
inline Tensor saved(const Tensor& x) { return x.detach().contiguous(); }

// Backward closures return one gradient per input.
using Grads = std::vector<Tensor>;

}  // namespace ag::detail
