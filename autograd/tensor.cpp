#include "autograd/tensor.h"

#include <cmath>
#include <new>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "autograd/engine.h"
#include "autograd/generator.h"
#include "autograd/ops.h"

namespace ag {

std::string shape_str(const Shape& shape) { return fmt::format("[{}]", fmt::join(shape, ",")); }

int64_t numel_of(const Shape& shape, const char* op) {
    int64_t product = 1;  // of the sizes other than 0
    bool fits = true, has_zero = false;
    for (int64_t s : shape) {
        if (s < 0) throw std::invalid_argument(fmt::format("{}: negative size in shape {}", op, shape_str(shape)));
        has_zero = has_zero || s == 0;
        if (s != 0) fits = fits && checked_mul(product, s, product);
    }
    if (!fits)
        throw std::invalid_argument(
            has_zero ? fmt::format("{}: shape {} is too large: its sizes other than 0 multiply to 2^63 or more", op,
                                   shape_str(shape))
                     : fmt::format("{}: shape {} has 2^63 or more elements", op, shape_str(shape)));
    return has_zero ? 0 : product;
}

// Each stride is a product of sizes, which numel_of's check keeps in range.
Shape contiguous_strides(const Shape& shape) {
    numel_of(shape, "contiguous_strides");
    Shape strides(shape.size());
    int64_t stride = 1;
    for (size_t i = shape.size(); i-- > 0;) {
        strides[i] = stride;
        stride *= shape[i];
    }
    return strides;
}

Tensor empty(const Shape& shape, const char* op) {
    const auto n = static_cast<size_t>(numel_of(shape, op));
    // Past what a std::vector can hold (2^60 doubles) no memory would do:
    // fail the way an allocation fails, not with the vector's length_error.
    if (n > Storage().max_size()) throw std::bad_alloc();
    auto impl = std::make_shared<TensorImpl>();
    impl->storage = std::make_shared<Storage>(n);
    impl->shape = shape;
    impl->strides = contiguous_strides(shape);
    return Tensor(std::move(impl));
}

// ---- factories --------------------------------------------------------------

// A factory's tensor, its shape checked under the factory's name.
static Tensor filled(const char* op, const Shape& shape, double value, bool requires_grad) {
    Tensor t = empty(shape, op);
    std::fill_n(t.data(), t.numel(), value);
    return t.requires_grad_(requires_grad);
}

Tensor Tensor::zeros(const Shape& shape, bool requires_grad) { return filled("zeros", shape, 0.0, requires_grad); }

Tensor Tensor::ones(const Shape& shape, bool requires_grad) { return filled("ones", shape, 1.0, requires_grad); }

Tensor Tensor::full(const Shape& shape, double value, bool requires_grad) {
    return filled("full", shape, value, requires_grad);
}

Tensor Tensor::scalar(double value, bool requires_grad) { return filled("scalar", {}, value, requires_grad); }

Tensor Tensor::arange(double end) { return arange(0.0, end, 1.0); }

Tensor Tensor::arange(double start, double end, double step) {
    if (step == 0.0 || !std::isfinite(start) || !std::isfinite(end) || !std::isfinite(step))
        throw std::invalid_argument(fmt::format("arange: bad range start={} end={} step={}", start, end, step));
    // (end - start) / step may overflow to inf; a count of 2^63 or more does not convert to int64
    const double count = std::max(0.0, std::ceil((end - start) / step));
    if (!(count < 0x1p63))
        throw std::invalid_argument(
            fmt::format("arange: start={} end={} step={} gives {} elements, 2^63 or more", start, end, step, count));
    const auto n = static_cast<int64_t>(count);
    Tensor t = empty({n}, "arange");
    for (int64_t i = 0; i < n; ++i) t.data()[i] = start + static_cast<double>(i) * step;
    return t;
}

Tensor Tensor::from(const Shape& shape, std::vector<double> values, bool requires_grad) {
    const int64_t n = numel_of(shape, "Tensor::from");
    if (static_cast<int64_t>(values.size()) != n)
        throw std::invalid_argument(
            fmt::format("Tensor::from: shape {} needs {} values, got {}", shape_str(shape), n, values.size()));
    Tensor t = empty(shape);
    std::copy(values.begin(), values.end(), t.impl_->storage->begin());
    t.impl_->requires_grad = requires_grad;
    return t;
}

Tensor Tensor::randn(const Shape& shape, Generator& gen, double mean, double std, bool requires_grad) {
    Tensor t = empty(shape, "randn");
    for (double& v : *t.impl_->storage) v = gen.normal(mean, std);
    t.impl_->requires_grad = requires_grad;
    return t;
}

Tensor Tensor::uniform(const Shape& shape, Generator& gen, double low, double high, bool requires_grad) {
    Tensor t = empty(shape, "uniform");
    for (double& v : *t.impl_->storage) v = gen.uniform(low, high);
    t.impl_->requires_grad = requires_grad;
    return t;
}

// ---- shape ------------------------------------------------------------------

static const TensorImpl& checked(const std::shared_ptr<TensorImpl>& impl) {
    if (!impl) throw std::logic_error("use of an undefined Tensor");
    return *impl;
}

const Shape& Tensor::strides() const { return checked(impl_).strides; }

int64_t Tensor::size(int64_t d) const {
    const int64_t n = dim();
    if (d < -n || d >= n)
        throw std::invalid_argument(fmt::format("size: dim {} out of range for shape {}", d, shape_str(shape())));
    return shape()[static_cast<size_t>(d < 0 ? d + n : d)];
}

bool Tensor::is_contiguous() const {
    const TensorImpl& t = checked(impl_);
    int64_t expected = 1;
    for (size_t i = t.shape.size(); i-- > 0;) {
        if (t.shape[i] == 1) continue;  // any stride works for a size-1 dim
        if (t.strides[i] != expected) return false;
        expected *= t.shape[i];
    }
    return true;
}

// ---- data -------------------------------------------------------------------

void Tensor::throw_undefined() { throw std::logic_error("use of an undefined Tensor"); }

double Tensor::item() const {
    if (numel() != 1)
        throw std::invalid_argument(
            fmt::format("item: tensor of shape {} has {} elements, not 1", shape_str(shape()), numel()));
    return data()[0];
}

double Tensor::at(std::initializer_list<int64_t> index) const {
    if (static_cast<int64_t>(index.size()) != dim())
        throw std::invalid_argument(fmt::format("at: {} indices for shape {}", index.size(), shape_str(shape())));
    int64_t pos = 0;
    size_t d = 0;
    for (int64_t i : index) {
        const int64_t n = shape()[d];
        if (i < -n || i >= n)
            throw std::invalid_argument(
                fmt::format("at: index {} out of range for dim {} of shape {}", i, d, shape_str(shape())));
        pos += (i < 0 ? i + n : i) * strides()[d];
        ++d;
    }
    return data()[pos];
}

// Visit every element of a strided tensor in row-major order.
template <typename F>
static void for_each_strided(const TensorImpl& t, F&& f) {
    const int64_t n = numel_of(t.shape);
    if (n == 0) return;
    const size_t nd = t.shape.size();
    std::vector<int64_t> idx(nd, 0);
    const double* base = t.storage->data() + t.offset;
    int64_t pos = 0;
    for (int64_t k = 0; k < n; ++k) {
        f(base[pos]);
        for (size_t d = nd; d-- > 0;) {  // odometer increment
            pos += t.strides[d];
            if (++idx[d] < t.shape[d]) break;
            pos -= t.strides[d] * t.shape[d];
            idx[d] = 0;
        }
    }
}

std::vector<double> Tensor::to_vector() const {
    std::vector<double> out;
    out.reserve(static_cast<size_t>(numel()));
    for_each_strided(checked(impl_), [&](double v) { out.push_back(v); });
    return out;
}

// Copy into fresh row-major storage; the copy's gradient is the gradient
// itself (a copy is the identity function).
Tensor Tensor::clone() const {
    Tensor out = empty(shape());
    double* dst = out.data();
    if (is_contiguous())
        std::copy_n(data(), numel(), dst);
    else
        for_each_strided(*impl_, [&](double v) { *dst++ = v; });
    return record("clone", out, {*this}, [](const Tensor& g) { return std::vector<Tensor>{g}; });
}

Tensor Tensor::contiguous() const { return is_contiguous() ? *this : clone(); }

// ---- autograd ---------------------------------------------------------------

bool Tensor::requires_grad() const { return checked(impl_).requires_grad; }

Tensor& Tensor::requires_grad_(bool on) {
    if (!is_leaf()) throw std::logic_error("requires_grad_: only leaf tensors can change it (use detach() first)");
    impl_->requires_grad = on;
    return *this;
}

bool Tensor::is_leaf() const { return checked(impl_).grad_fn == nullptr; }

Tensor Tensor::grad() const {
    const auto& g = checked(impl_).grad;
    return g ? Tensor(g) : Tensor();
}

Tensor& Tensor::set_grad(const Tensor& grad) {
    if (grad.shape() != shape())
        throw std::invalid_argument(fmt::format("set_grad: a gradient of shape {} for a tensor of shape {}",
                                                shape_str(grad.shape()), shape_str(shape())));
    impl_->grad = grad.impl_ptr();
    return *this;
}

void Tensor::zero_grad() { checked(impl_), impl_->grad.reset(); }
void Tensor::retain_grad() { checked(impl_), impl_->retains_grad = true; }
std::shared_ptr<Node> Tensor::grad_fn() const { return checked(impl_).grad_fn; }
std::string Tensor::name() const { return checked(impl_).name; }

Tensor& Tensor::set_name(std::string name) {
    checked(impl_), impl_->name = std::move(name);
    return *this;
}

void Tensor::backward() const {
    if (numel() != 1)
        throw std::invalid_argument(
            fmt::format("backward: the output has shape {}; backward() without a gradient needs a single-element "
                        "loss (pass dL/doutput as backward(grad) for other shapes)",
                        shape_str(shape())));
    run_backward(*this, Tensor::ones(shape()));
}

void Tensor::backward(const Tensor& grad_output) const { run_backward(*this, grad_output); }

Tensor Tensor::detach() const {
    auto impl = std::make_shared<TensorImpl>();
    impl->storage = checked(impl_).storage;
    impl->shape = impl_->shape;
    impl->strides = impl_->strides;
    impl->offset = impl_->offset;
    return Tensor(std::move(impl));
}

Tensor& Tensor::set_(const Tensor& source) {
    if (!is_leaf()) throw std::logic_error("set_: only leaf tensors can take another tensor's storage");
    if (source.shape() != shape())
        throw std::invalid_argument(fmt::format("set_: source of shape {} for a tensor of shape {}",
                                                shape_str(source.shape()), shape_str(shape())));
    impl_->storage = source.impl_->storage;
    impl_->offset = source.impl_->offset;
    impl_->strides = source.impl_->strides;
    return *this;
}

// ---- methods that forward to ops.h ------------------------------------------

Tensor Tensor::reshape(const Shape& s) const { return ag::reshape(*this, s); }
Tensor Tensor::transpose(int64_t d0, int64_t d1) const { return ag::transpose(*this, d0, d1); }
Tensor Tensor::t() const {
    if (dim() != 2) throw std::invalid_argument("t: expects a 2-D tensor, got " + shape_str(shape()));
    return ag::transpose(*this, 0, 1);
}
Tensor Tensor::permute(const Shape& dims) const { return ag::permute(*this, dims); }
Tensor Tensor::narrow(int64_t d, int64_t start, int64_t length) const { return ag::narrow(*this, d, start, length); }
Tensor Tensor::matmul(const Tensor& other) const { return ag::matmul(*this, other); }
Tensor Tensor::sum() const { return ag::sum(*this); }
Tensor Tensor::mean() const { return ag::mean(*this); }
Tensor Tensor::pow(double e) const { return ag::pow(*this, e); }
Tensor Tensor::exp() const { return ag::exp(*this); }
Tensor Tensor::log() const { return ag::log(*this); }

// ---- printing -----------------------------------------------------------------
// PyTorch's layout: nested brackets, 4 decimals (scientific when the values
// are very large or small), long dimensions elided with "...".

static std::string format_number(double v, bool scientific) {
    return scientific ? fmt::format("{:.4e}", v) : fmt::format("{:.4f}", v);
}

static void print_dim(std::ostringstream& os, const std::vector<double>& values, const Shape& shape, size_t d,
                      int64_t offset, bool scientific, size_t indent) {
    const int64_t n = shape[d];
    const int64_t inner = numel_of(Shape(shape.begin() + static_cast<std::ptrdiff_t>(d) + 1, shape.end()));
    const int64_t edge = 3, limit = 8;  // show 3 at each end of a dimension longer than 8
    os << '[';
    for (int64_t i = 0; i < n; ++i) {
        if (n > limit && i == edge) {
            os << (d + 1 == shape.size() ? "..., " : "...,\n" + std::string(indent + 1, ' '));
            i = n - edge;
        }
        if (d + 1 == shape.size())
            os << format_number(values[static_cast<size_t>(offset + i)], scientific);
        else
            print_dim(os, values, shape, d + 1, offset + i * inner, scientific, indent + 1);
        if (i + 1 < n) os << (d + 1 == shape.size() ? ", " : ",\n" + std::string(indent + 1, ' '));
    }
    os << ']';
}

std::string Tensor::str() const {
    if (!defined()) return "tensor(undefined)";
    const std::vector<double> values = to_vector();
    double largest = 0.0, smallest = INFINITY;
    for (double v : values) {
        if (!std::isfinite(v) || v == 0.0) continue;
        largest = std::max(largest, std::abs(v));
        smallest = std::min(smallest, std::abs(v));
    }
    const bool scientific = largest >= 1e5 || (smallest < 1e-4 && largest > 0.0);
    std::ostringstream os;
    os << "tensor(";
    if (dim() == 0)
        os << format_number(values[0], scientific);
    else if (numel() == 0)
        os << "[]";
    else
        print_dim(os, values, shape(), 0, 0, scientific, 7);
    os << ", shape=" << shape_str(shape());
    if (grad_fn())
        os << ", grad_fn=" << grad_fn()->op;
    else if (requires_grad())
        os << ", requires_grad=true";
    os << ')';
    return os.str();
}

std::ostream& operator<<(std::ostream& os, const Tensor& t) { return os << t.str(); }

}  // namespace ag
