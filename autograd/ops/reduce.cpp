// Reductions. Each output element is reduced in index order by one thread,
// so sums are bitwise the same for any thread count.
#include <cmath>
#include <limits>
#include <set>

#include "autograd/ops/common.h"

namespace ag {

using detail::fail;
using detail::Grads;

namespace {

// View x (contiguous) as [outer, n, inner] around dim d and combine along n:
// out[o, i] = fold(x[o, 0, i], x[o, 1, i], ...). The result keeps dim d
// with size 1.
template <typename Fold>
Tensor reduce_dim(const Tensor& x, int64_t d, double init, Fold fold) {
    const Tensor xc = x.contiguous();
    const Shape& s = xc.shape();
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < d; ++i) outer *= s[static_cast<size_t>(i)];
    for (size_t i = static_cast<size_t>(d) + 1; i < s.size(); ++i) inner *= s[i];
    const int64_t n = s[static_cast<size_t>(d)];
    Shape out_shape = s;
    out_shape[static_cast<size_t>(d)] = 1;
    Tensor out = Tensor::full(out_shape, init);
    const double* px = xc.data();
    double* po = out.data();
    detail::parallel_for(outer, std::max<int64_t>(1, detail::kPointwiseGrain / std::max<int64_t>(1, n * inner)),
                         [&](int64_t o0, int64_t o1) {
                             for (int64_t o = o0; o < o1; ++o)
                                 for (int64_t r = 0; r < n; ++r)
                                     for (int64_t i = 0; i < inner; ++i)
                                         po[o * inner + i] = fold(po[o * inner + i], px[(o * n + r) * inner + i]);
                         });
    return out;
}

// Dims to reduce, wrapped, unique, in descending order (so reducing one
// does not renumber the others).
std::vector<int64_t> reduce_dims(const char* op, const Tensor& x, const Shape& dims) {
    // An empty list is no reduction at all here (PyTorch reads it as every
    // dim): refused rather than guessed.
    if (dims.empty()) fail(op, "no dims given for shape {}: {}(x) reduces over all of them", shape_str(x.shape()), op);
    std::set<int64_t, std::greater<>> unique;
    for (int64_t d : dims) {
        const int64_t w = detail::wrap_dim(op, d, x.shape());
        if (!unique.insert(w).second) fail(op, "dim {} listed twice for shape {}", d, shape_str(x.shape()));
    }
    return {unique.begin(), unique.end()};
}

Shape keepdim_shape(const Tensor& x, const std::vector<int64_t>& dims) {
    Shape s = x.shape();
    for (int64_t d : dims) s[static_cast<size_t>(d)] = 1;
    return s;
}

Shape drop_dims(const Shape& keep, const std::vector<int64_t>& dims) {
    Shape out;
    for (size_t i = 0; i < keep.size(); ++i)
        if (std::find(dims.begin(), dims.end(), static_cast<int64_t>(i)) == dims.end()) out.push_back(keep[i]);
    return out;
}

// The raw sum over `dims` (wrapped, descending), keeping them as size 1.
Tensor sum_kept(const Tensor& x, const std::vector<int64_t>& dims) {
    Tensor out = x;
    for (int64_t d : dims) out = reduce_dim(out, d, 0.0, [](double acc, double v) { return acc + v; });
    return out;
}

}  // namespace

// Σ over everything: the gradient is g copied to every element.
Tensor sum(const Tensor& x) {
    const Tensor xc = x.contiguous();
    double total = 0.0;
    const double* p = xc.data();
    for (int64_t i = 0; i < xc.numel(); ++i) total += p[i];
    Tensor out = Tensor::scalar(total);
    return record("sum", out, {x},
                  [shape = x.shape()](const Tensor& g) { return Grads{Tensor::full(shape, g.item())}; });
}

// Σ over some dims: the gradient is g broadcast back along them.
Tensor sum(const Tensor& x, const Shape& dims, bool keepdim) {
    const auto ds = reduce_dims("sum", x, dims);
    const Shape kept = keepdim_shape(x, ds);
    Tensor out = sum_kept(x.detach(), ds);
    if (!keepdim) out = out.detach().reshape(drop_dims(kept, ds));
    return record("sum", out, {x}, [kept, shape = x.shape()](const Tensor& g) {
        return Grads{detail::expand_view(g.contiguous().reshape(kept), shape).contiguous()};
    });
}

Tensor mean(const Tensor& x) {
    if (x.numel() == 0) fail("mean", "of an empty tensor {}", shape_str(x.shape()));
    return sum(x) / static_cast<double>(x.numel());
}

Tensor mean(const Tensor& x, const Shape& dims, bool keepdim) {
    int64_t count = 1;
    for (int64_t d : reduce_dims("mean", x, dims)) count *= x.shape()[static_cast<size_t>(d)];
    if (count == 0) fail("mean", "over an empty dim of {}", shape_str(x.shape()));
    return sum(x, dims, keepdim) / static_cast<double>(count);
}

// Maxima are for reading results (accuracy, argmax decoding): no gradient.
Tensor max(const Tensor& x) {
    if (x.numel() == 0) fail("max", "of an empty tensor {}", shape_str(x.shape()));
    double m = -std::numeric_limits<double>::infinity();
    for (double v : x.to_vector()) m = std::isnan(v) || v > m ? v : m;  // NaN wins, like PyTorch
    return Tensor::scalar(m);
}

Tensor max(const Tensor& x, int64_t dim, bool keepdim) {
    const int64_t d = detail::wrap_dim("max", dim, x.shape());
    if (x.shape()[static_cast<size_t>(d)] == 0) fail("max", "over an empty dim of {}", shape_str(x.shape()));
    Tensor out = reduce_dim(x.detach(), d, -std::numeric_limits<double>::infinity(),
                            [](double m, double v) { return std::isnan(v) || v > m ? v : m; });
    return keepdim ? out : out.reshape(drop_dims(out.shape(), {d}));
}

Tensor argmax(const Tensor& x, int64_t dim, bool keepdim) {
    const int64_t d = detail::wrap_dim("argmax", dim, x.shape());
    const int64_t n = x.shape()[static_cast<size_t>(d)];
    if (n == 0) fail("argmax", "over an empty dim of {}", shape_str(x.shape()));
    // Move dim d last, then scan each row; the first maximum wins, and a NaN
    // is the maximum (as in max above, and PyTorch).
    Shape perm;
    for (int64_t i = 0; i < x.dim(); ++i)
        if (i != d) perm.push_back(i);
    perm.push_back(d);
    const Tensor rows = x.detach().permute(perm).contiguous();
    const int64_t count = rows.numel() / n;
    Shape out_shape = x.shape();
    out_shape[static_cast<size_t>(d)] = 1;
    Tensor out = empty(out_shape);
    for (int64_t r = 0; r < count; ++r) {
        const double* p = rows.data() + r * n;
        int64_t best = 0;
        for (int64_t j = 1; j < n && !std::isnan(p[best]); ++j)
            if (std::isnan(p[j]) || p[j] > p[best]) best = j;
        out.data()[r] = static_cast<double>(best);
    }
    return keepdim ? out : out.reshape(drop_dims(out_shape, {d}));
}

// The backward of broadcasting: sum the stretched dims away.
Tensor sum_to(const Tensor& x, const Shape& shape) {
    if (x.shape() == shape) return x;
    const Shape& s = x.shape();
    if (shape.size() > s.size() || detail::broadcast_shapes("sum_to", shape, s) != s)
        fail("sum_to", "{} was not broadcast from {}", shape_str(s), shape_str(shape));
    const size_t lead = s.size() - shape.size();
    Shape dims;
    for (size_t i = 0; i < s.size(); ++i)
        if (i < lead || (shape[i - lead] == 1 && s[i] != 1)) dims.push_back(static_cast<int64_t>(i));
    return sum(x, dims, true).reshape(shape);
}

}  // namespace ag
