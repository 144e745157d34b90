// Shape and indexing ops. reshape (of contiguous data), transpose, permute
// and narrow are views: new shape, strides and offset on the same storage.
#include <cmath>
#include <numeric>

#include "autograd/ops/common.h"

namespace ag {

using detail::fail;
using detail::Grads;
using detail::wrap_dim;

namespace {

// A new handle on x's storage with the given layout (no history).
Tensor make_view(const Tensor& x, Shape shape, Shape strides, int64_t offset) {
    auto impl = std::make_shared<TensorImpl>();
    impl->storage = x.impl()->storage;
    impl->shape = std::move(shape);
    impl->strides = std::move(strides);
    impl->offset = offset;
    return Tensor(std::move(impl));
}

// An integer stored as double, checked to be whole and in [0, n).
int64_t checked_index(const char* op, double v, int64_t n) {
    if (!(v >= 0 && v < static_cast<double>(n)) || v != std::floor(v))
        fail(op, "index {} is not an integer in [0, {})", v, n);
    return static_cast<int64_t>(v);
}

// [outer, n, inner] around dim d.
std::pair<int64_t, int64_t> outer_inner(const Shape& s, int64_t d) {
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < d; ++i) outer *= s[static_cast<size_t>(i)];
    for (size_t i = static_cast<size_t>(d) + 1; i < s.size(); ++i) inner *= s[i];
    return {outer, inner};
}

}  // namespace

// reshape: the same numbers in row-major order, a new shape. The gradient
// is reshaped back.
Tensor reshape(const Tensor& x, const Shape& shape) {
    Shape s = shape;
    int64_t infer = -1;
    for (size_t i = 0; i < s.size(); ++i) {
        if (s[i] == -1) {
            if (infer >= 0) fail("reshape", "{} -> {}: only one dim may be -1", shape_str(x.shape()), shape_str(shape));
            infer = static_cast<int64_t>(i);
            s[i] = 1;  // for now: numel_of(s) is then the product of the others
        } else if (s[i] < 0) {
            fail("reshape", "{} -> {}: negative size", shape_str(x.shape()), shape_str(shape));
        }
    }
    int64_t known = 0;  // checked before it is compared: 4 · (2^62 + 5) wraps round to 20
    try {
        known = numel_of(s, "reshape");
    } catch (const std::invalid_argument&) {
        fail("reshape", "{} -> {}: the sizes other than 0 multiply to 2^63 or more", shape_str(x.shape()),
             shape_str(shape));
    }
    if (infer >= 0 && known > 0 && x.numel() % known == 0)
        s[static_cast<size_t>(infer)] = x.numel() / known;
    else if (infer >= 0 || known != x.numel())
        fail("reshape", "{} ({} elements) -> {}: sizes do not match", shape_str(x.shape()), x.numel(),
             shape_str(shape));
    const Tensor xc = x.contiguous();
    Tensor out = make_view(xc, s, contiguous_strides(s), xc.impl()->offset);
    return record("reshape", out, {xc},
                  [from = x.shape()](const Tensor& g) { return Grads{g.contiguous().reshape(from)}; });
}

// permute: out.dim(i) = x.dim(dims[i]); the gradient goes through the
// inverse permutation. (transpose is the permutation that swaps two dims.)
static Tensor permute_as(const char* op, const Tensor& x, const Shape& dims) {
    const int64_t n = x.dim();
    if (static_cast<int64_t>(dims.size()) != n)
        fail(op, "{} dims given for shape {}", dims.size(), shape_str(x.shape()));
    Shape shape(dims.size()), strides(dims.size()), inverse(dims.size(), -1);
    for (size_t i = 0; i < dims.size(); ++i) {
        const int64_t d = wrap_dim(op, dims[i], x.shape());
        if (inverse[static_cast<size_t>(d)] != -1)
            fail(op, "dims {} of {} repeat dim {}", shape_str(dims), shape_str(x.shape()), d);
        inverse[static_cast<size_t>(d)] = static_cast<int64_t>(i);
        shape[i] = x.shape()[static_cast<size_t>(d)];
        strides[i] = x.strides()[static_cast<size_t>(d)];
    }
    Tensor out = make_view(x, shape, strides, x.impl()->offset);
    return record(op, out, {x}, [inverse](const Tensor& g) { return Grads{g.permute(inverse)}; });
}

Tensor permute(const Tensor& x, const Shape& dims) { return permute_as("permute", x, dims); }

Tensor transpose(const Tensor& x, int64_t d0, int64_t d1) {
    const int64_t a = wrap_dim("transpose", d0, x.shape()), b = wrap_dim("transpose", d1, x.shape());
    Shape dims(static_cast<size_t>(x.dim()));
    std::iota(dims.begin(), dims.end(), 0);
    std::swap(dims[static_cast<size_t>(a)], dims[static_cast<size_t>(b)]);
    return permute_as("transpose", x, dims);
}

// narrow: elements start … start+length-1 along dim. The gradient is g
// placed in a zero tensor of x's shape.
Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length) {
    const int64_t d = wrap_dim("narrow", dim, x.shape());
    const int64_t size = x.shape()[static_cast<size_t>(d)];
    if (start < 0 || length < 0)
        fail("narrow", "start {} and length {} must not be negative (dim {} of {})", start, length, dim,
             shape_str(x.shape()));
    int64_t end;
    if (!checked_add(start, length, end) || end > size)
        fail("narrow", "start {} + length {} overflows dim {} of size {} in {}", start, length, dim, size,
             shape_str(x.shape()));
    Shape shape = x.shape();
    shape[static_cast<size_t>(d)] = length;
    Tensor out = make_view(x, shape, x.strides(), x.impl()->offset + start * x.strides()[static_cast<size_t>(d)]);
    return record("narrow", out, {x}, [shape = x.shape(), d, start, length](const Tensor& g) {
        Tensor dx = Tensor::zeros(shape);
        const Tensor gc = g.contiguous();
        const auto [outer, inner] = outer_inner(shape, d);
        const int64_t n = shape[static_cast<size_t>(d)];
        if (length * inner > 0)
            for (int64_t o = 0; o < outer; ++o)
                std::copy_n(gc.data() + o * length * inner, length * inner, dx.data() + (o * n + start) * inner);
        return Grads{dx};
    });
}

// cat: inputs laid end to end along dim; each gets back its slice of g.
Tensor cat(const std::vector<Tensor>& xs, int64_t dim) {
    if (xs.empty()) fail("cat", "needs at least one tensor");
    for (size_t i = 0; i < xs.size(); ++i)
        if (!xs[i].defined()) fail("cat", "tensor {} of {} is undefined", i, xs.size());
    if (xs[0].dim() == 0) fail("cat", "a scalar (shape []) has no dim to join along: stack makes [n] of scalars");
    const int64_t d = wrap_dim("cat", dim, xs[0].shape());
    Shape shape = xs[0].shape();
    int64_t total = 0;
    for (const Tensor& x : xs) {
        Shape a = x.shape(), b = xs[0].shape();
        if (a.size() != b.size()) fail("cat", "{} and {} have different ranks", shape_str(b), shape_str(a));
        a[static_cast<size_t>(d)] = b[static_cast<size_t>(d)] = 0;
        if (a != b) fail("cat", "{} and {} differ outside dim {}", shape_str(xs[0].shape()), shape_str(x.shape()), dim);
        if (!checked_add(total, x.shape()[static_cast<size_t>(d)], total))
            fail("cat", "{} to {}: the sizes along dim {} add up to 2^63 or more", shape_str(xs[0].shape()),
                 shape_str(x.shape()), dim);
    }
    shape[static_cast<size_t>(d)] = total;
    Tensor out = empty(shape, "cat");
    const auto [outer, inner] = outer_inner(shape, d);
    int64_t at = 0;  // running offset along dim
    std::vector<int64_t> sizes;
    for (const Tensor& x : xs) {
        const Tensor xc = x.contiguous();
        const int64_t n = x.shape()[static_cast<size_t>(d)];
        if (n * inner > 0)  // else nothing to copy, however many outer rows (2^36 of them, say)
            for (int64_t o = 0; o < outer; ++o)
                std::copy_n(xc.data() + o * n * inner, n * inner, out.data() + (o * total + at) * inner);
        at += n;
        sizes.push_back(n);
    }
    return record("cat", out, xs, [d, sizes](const Tensor& g) {
        Grads grads;
        int64_t start = 0;
        for (int64_t n : sizes) {
            grads.push_back(g.narrow(d, start, n));
            start += n;
        }
        return grads;
    });
}

// stack: a new dim of size xs.size(), as cat of inputs with a size-1 dim.
Tensor stack(const std::vector<Tensor>& xs, int64_t dim) {
    if (xs.empty()) fail("stack", "needs at least one tensor");
    const int64_t d = wrap_dim("stack", dim, xs[0].shape(), 1);
    std::vector<Tensor> unsqueezed;
    for (const Tensor& x : xs) {
        if (x.shape() != xs[0].shape())
            fail("stack", "{} and {} differ", shape_str(xs[0].shape()), shape_str(x.shape()));
        Shape s = x.shape();
        s.insert(s.begin() + d, 1);
        unsqueezed.push_back(x.reshape(s));
    }
    Shape out = xs[0].shape();
    out.insert(out.begin() + d, static_cast<int64_t>(xs.size()));
    numel_of(out, "stack");
    return cat(unsqueezed, d);
}

// index_select: out[..., i, ...] = x[..., index[i], ...] along dim. The
// backward adds each slice of g into the slice it was read from (an index
// may repeat, so the adds accumulate).
Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index) {
    const int64_t d = wrap_dim("index_select", dim, x.shape());
    if (index.dim() != 1) fail("index_select", "index must be 1-D, got {}", shape_str(index.shape()));
    const int64_t size = x.shape()[static_cast<size_t>(d)];
    std::vector<int64_t> idx;
    for (double v : index.to_vector()) idx.push_back(checked_index("index_select", v, size));
    const int64_t n = static_cast<int64_t>(idx.size());
    Shape shape = x.shape();
    shape[static_cast<size_t>(d)] = n;
    const Tensor xc = x.contiguous();
    Tensor out = empty(shape, "index_select");
    const auto [all_outer, inner] = outer_inner(shape, d);
    const int64_t outer = out.numel() > 0 ? all_outer : 0;  // nothing to copy, however many outer rows
    for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < n; ++i)
            std::copy_n(xc.data() + (o * size + idx[static_cast<size_t>(i)]) * inner, inner,
                        out.data() + (o * n + i) * inner);
    return record("index_select", out, {x}, [idx, shape = x.shape(), d, n, outer, inner = inner](const Tensor& g) {
        Tensor dx = Tensor::zeros(shape);
        const Tensor gc = g.contiguous();
        const int64_t rows = shape[static_cast<size_t>(d)];
        for (int64_t o = 0; o < outer; ++o)
            for (int64_t i = 0; i < n; ++i) {
                double* dst = dx.data() + (o * rows + idx[static_cast<size_t>(i)]) * inner;
                const double* src = gc.data() + (o * n + i) * inner;
                for (int64_t j = 0; j < inner; ++j) dst[j] += src[j];
            }
        return Grads{dx};
    });
}

// embedding: out[..., :] = weight[ids[...], :]. Backward: scatter-add the
// rows of g into the rows of dW that were read, in id order.
Tensor embedding(const Tensor& weight, const Tensor& ids) {
    if (weight.dim() != 2) fail("embedding", "weight must be [V, d], got {}", shape_str(weight.shape()));
    const int64_t vocab = weight.size(0), d = weight.size(1);
    std::vector<int64_t> rows;
    for (double v : ids.to_vector()) rows.push_back(checked_index("embedding", v, vocab));
    Shape shape = ids.shape();
    shape.push_back(d);
    const Tensor wc = weight.contiguous();
    Tensor out = empty(shape, "embedding");
    detail::parallel_for(static_cast<int64_t>(rows.size()), 256, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i)
            std::copy_n(wc.data() + rows[static_cast<size_t>(i)] * d, d, out.data() + i * d);
    });
    return record("embedding", out, {weight}, [rows, vocab, d](const Tensor& g) {
        Tensor dw = Tensor::zeros({vocab, d});
        const Tensor gc = g.contiguous();
        for (size_t i = 0; i < rows.size(); ++i) {
            double* dst = dw.data() + rows[i] * d;
            const double* src = gc.data() + static_cast<int64_t>(i) * d;
            for (int64_t j = 0; j < d; ++j) dst[j] += src[j];
        }
        return Grads{dw};
    });
}

}  // namespace ag
