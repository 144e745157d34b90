#pragma once
// Tensor: a cheap handle to an n-dimensional array of double.
//
// Several tensors can share one storage: a view (reshape of a contiguous
// tensor, transpose, permute, narrow) is a new shape, strides and offset on
// the same numbers, made without copying. Kernels want contiguous data, so
// they call contiguous(), which copies only when it has to.
//
// A tensor that requires grad takes part in reverse-mode autodiff: the op
// that made it records a Node (engine.h) with its inputs and its backward,
// and loss.backward() fills .grad() of every leaf that requires grad.
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include <fmt/ostream.h>

#include "autograd/storage.h"

namespace ag {

using Shape = std::vector<int64_t>;

class Generator;
struct Node;
struct TensorImpl;

class Tensor {
public:
    Tensor() = default;  // an undefined tensor (defined() == false)

    // --- factories -------------------------------------------------------
    static Tensor zeros(const Shape& shape, bool requires_grad = false);
    static Tensor ones(const Shape& shape, bool requires_grad = false);
    static Tensor full(const Shape& shape, double value, bool requires_grad = false);
    static Tensor scalar(double value, bool requires_grad = false);  // shape []
    // [start, start+step, ...) below end, like torch.arange
    static Tensor arange(double end);
    static Tensor arange(double start, double end, double step = 1.0);
    // values in row-major order; their count must equal the shape's numel
    static Tensor from(const Shape& shape, std::vector<double> values, bool requires_grad = false);
    static Tensor randn(const Shape& shape, Generator& gen, double mean = 0.0, double std = 1.0,
                        bool requires_grad = false);
    static Tensor uniform(const Shape& shape, Generator& gen, double low, double high, bool requires_grad = false);

    // --- shape -----------------------------------------------------------
    bool defined() const { return impl_ != nullptr; }
    const Shape& shape() const;
    const Shape& strides() const;
    int64_t dim() const;
    int64_t size(int64_t d) const;  // d may be negative (-1 = last)
    int64_t numel() const;
    bool is_contiguous() const;

    // --- data --------------------------------------------------------------
    // Pointer to the first element (storage + offset). Only meaningful as a
    // flat array when is_contiguous(); kernels call contiguous() first.
    double* data();
    const double* data() const;
    double item() const;                                    // one element only
    double at(std::initializer_list<int64_t> index) const;  // any layout
    std::vector<double> to_vector() const;                  // row-major copy
    Tensor contiguous() const;                              // itself if contiguous, else a copy (tracked)
    Tensor clone() const;                                   // always a copy (tracked)

    // --- autograd ----------------------------------------------------------
    bool requires_grad() const;
    Tensor& requires_grad_(bool on = true);  // leaves only
    bool is_leaf() const;                    // not made by a recorded op
    Tensor grad() const;                     // undefined until backward
    // Makes `grad` this tensor's .grad() (PyTorch's `x.grad = g`: the same
    // numbers, not a copy); a later backward() adds into it. Shapes must match.
    Tensor& set_grad(const Tensor& grad);
    void zero_grad();       // drops .grad()
    void retain_grad();     // keep .grad() of a non-leaf
    void backward() const;  // scalar losses only
    void backward(const Tensor& grad_output) const;
    Tensor detach() const;  // same storage, no history
    // libtorch's set_: this tensor now reads and writes source's numbers
    // (its storage, offset and strides); its own requires_grad, .grad() and
    // name stay. Leaves only, and here the shapes must match.
    Tensor& set_(const Tensor& source);
    std::shared_ptr<Node> grad_fn() const;  // null for leaves
    std::string name() const;               // optional label (printing)
    Tensor& set_name(std::string name);

    // --- ops as methods (same as the free functions in ops.h) -------------
    Tensor reshape(const Shape& shape) const;
    Tensor view(const Shape& shape) const { return reshape(shape); }
    Tensor transpose(int64_t d0, int64_t d1) const;
    Tensor t() const;  // 2-D transpose
    Tensor permute(const Shape& dims) const;
    Tensor narrow(int64_t dim, int64_t start, int64_t length) const;
    Tensor matmul(const Tensor& other) const;
    Tensor sum() const;
    Tensor mean() const;
    Tensor pow(double exponent) const;
    Tensor exp() const;
    Tensor log() const;

    std::string str() const;  // PyTorch-like printing

    // --- internals (engine and kernels) -----------------------------------
    explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}
    TensorImpl* impl() const { return impl_.get(); }
    const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }

private:
    [[noreturn]] static void throw_undefined();

    std::shared_ptr<TensorImpl> impl_;
};

std::ostream& operator<<(std::ostream& os, const Tensor& t);

// "[2,3]": how error messages and printing show a shape.
std::string shape_str(const Shape& shape);

// Sizes, strides and offsets are int64, and so is every sum and product
// made of them. One that does not fit would wrap round to a small or
// negative number that passes every later bounds check, and a kernel would
// then read or write outside its storage (issue 13). So size arithmetic goes
// through these: `out` = a + b or a · b, and false when the exact result
// does not fit (GCC's and Clang's overflow builtins); the caller refuses
// with its own message.
inline bool checked_add(int64_t a, int64_t b, int64_t& out) { return !__builtin_add_overflow(a, b, &out); }
inline bool checked_mul(int64_t a, int64_t b, int64_t& out) { return !__builtin_mul_overflow(a, b, &out); }

// The number of elements of a shape. Throws std::invalid_argument naming
// `op` for a negative size, or when the sizes other than 0 multiply to 2^63
// or more: a shape with a 0 is refused too then, since its strides
// (products of its sizes) would not fit. Every tensor's shape passes this check, so
// the products and offsets computed from an existing tensor's shape fit.
int64_t numel_of(const Shape& shape, const char* op = "numel");
// Row-major strides of a shape (checked as numel_of does).
Shape contiguous_strides(const Shape& shape);

// What a Tensor points to. Kept public so that the engine and kernels stay
// simple; user code goes through Tensor.
struct TensorImpl {
    std::shared_ptr<Storage> storage;
    Shape shape;
    Shape strides;
    int64_t offset = 0;

    bool requires_grad = false;
    bool retains_grad = false;
    std::shared_ptr<TensorImpl> grad;  // accumulated by backward()
    std::shared_ptr<Node> grad_fn;     // the op that made this tensor
    std::string name;
};

// shape(), numel() and data() are called in kernels' setup code everywhere,
// and numel() in many a loop's condition: inline, so that the compiler can
// hoist it out of the loop (it was a call that checked the shape again on
// every element, 3.5 ns each: sum(x) and its backward on 164 × 64 took
// 39.6 µs, now 16.8).
inline const Shape& Tensor::shape() const {
    if (!impl_) throw_undefined();
    return impl_->shape;
}
inline int64_t Tensor::dim() const { return static_cast<int64_t>(shape().size()); }
// Every tensor's shape passed numel_of's check when it was made (its sizes
// other than 0 multiply to less than 2^63), so every partial product fits.
inline int64_t Tensor::numel() const {
    int64_t n = 1;
    for (const int64_t s : shape()) n *= s;
    return n;
}
inline double* Tensor::data() {
    if (!impl_) throw_undefined();
    return impl_->storage->data() + impl_->offset;
}
inline const double* Tensor::data() const {
    if (!impl_) throw_undefined();
    return impl_->storage->data() + impl_->offset;
}

// A fresh contiguous tensor whose numbers are NOT initialised: for ops that
// write every element of their output (use zeros() otherwise). An op that
// computes the output shape passes its name, which a refused shape's error
// names. More numbers than memory can hold throw std::bad_alloc.
Tensor empty(const Shape& shape, const char* op = "empty");

}  // namespace ag

template <>
struct fmt::formatter<ag::Tensor> : fmt::ostream_formatter {};
