#pragma once
// What the grading tests of the exercises on engine tensors (11-18) share:
// seeded random tensors, "the same tensor" with a message that shows the
// worst element, one forward + backward on fresh leaves, gradcheck with its
// findings in the failure message, and ways to look inside what a function
// did: which ops it ran, what its graph keeps, how much it multiplied, how
// its backward reads a gradient that is not contiguous.
#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "autograd/autograd.h"
#include "autograd/profile.h"
#include "grading_checks.h"

namespace grading {

// A tensor of `shape` with entries ~ N(0, scale²) drawn from rng.
inline ag::Tensor random_tensor(Random& rng, const ag::Shape& shape, double scale = 1.0) {
    std::vector<double> values(static_cast<size_t>(ag::numel_of(shape)));
    for (double& x : values) x = scale * rng.normal();
    return ag::Tensor::from(shape, std::move(values));
}

// Same shape, and every element within tol·max(1, |expected|).
inline bool same_tensor(const ag::Tensor& actual, const ag::Tensor& expected, double tol = 1e-9) {
    if (!actual.defined() || !expected.defined() || actual.shape() != expected.shape()) return false;
    const std::vector<double> a = actual.to_vector(), b = expected.to_vector();
    for (size_t i = 0; i < a.size(); ++i)
        if (!close(a[i], b[i], tol)) return false;
    return true;
}

// One line on how two tensors differ: the shapes, or the worst element.
inline std::string tensor_diff(const ag::Tensor& actual, const ag::Tensor& expected) {
    if (!actual.defined())
        return "got no tensor (undefined) where one of shape " + ag::shape_str(expected.shape()) + " was expected";
    if (actual.shape() != expected.shape())
        return "expected shape " + ag::shape_str(expected.shape()) + ", got " + ag::shape_str(actual.shape());
    const std::vector<double> a = actual.to_vector(), b = expected.to_vector();
    if (a.empty()) return "both empty";
    size_t worst = 0;
    double err = -1.0;
    for (size_t i = 0; i < a.size(); ++i) {
        const double e = std::isnan(a[i]) ? INFINITY : std::fabs(a[i] - b[i]);
        if (e > err) err = e, worst = i;
    }
    std::ostringstream out;
    out.precision(10);
    out << "shape " << ag::shape_str(expected.shape()) << ": largest difference at flat index " << worst
        << ", expected " << b[worst] << ", got " << a[worst];
    return out.str();
}

// Whether any element is NaN / every element is finite (an undefined
// tensor has no elements).
inline bool has_nan(const ag::Tensor& t) {
    const std::vector<double> v = t.defined() ? t.to_vector() : std::vector<double>{};
    return std::any_of(v.begin(), v.end(), [](double x) { return std::isnan(x); });
}
inline bool all_finite(const ag::Tensor& t) {
    const std::vector<double> v = t.defined() ? t.to_vector() : std::vector<double>{};
    return std::all_of(v.begin(), v.end(), [](double x) { return std::isfinite(x); });
}

// A fresh leaf holding a copy of t's numbers, requiring grad.
inline ag::Tensor leaf(const ag::Tensor& t) {
    ag::Tensor copy = t.detach().contiguous().clone();
    copy.requires_grad_(true);
    return copy;
}

// f on fresh leaf copies of `inputs`, then backward of L = Σ out ⊙ w with
// w ~ N(0, 1) drawn from `seed` (the same w for the same output shape): the
// output and dL/d(input) for every input (undefined where no gradient
// arrived, e.g. when the graph was cut).
struct ForwardBackward {
    ag::Tensor out;
    std::vector<ag::Tensor> grads;
};
inline ForwardBackward forward_backward(const ag::TensorFunction& f, const std::vector<ag::Tensor>& inputs,
                                        uint64_t seed) {
    std::vector<ag::Tensor> leaves;
    for (const ag::Tensor& x : inputs) leaves.push_back(leaf(x));
    ForwardBackward r;
    r.out = f(leaves);
    Random rng(seed);
    if (r.out.requires_grad()) ag::sum(ag::mul(r.out, random_tensor(rng, r.out.shape()))).backward();
    for (const ag::Tensor& x : leaves) r.grads.push_back(x.grad());
    return r;
}

// `y` must be ONE op recorded with ag::record (`op`, the name in the
// message) whose inputs are exactly `inputs`, so that its backward is the
// hand-written one and not the engine's chain rule. FAILs saying what is
// wrong.
inline void require_one_op(const ag::Tensor& y, const char* op, const char* inputs_text,
                           const std::vector<ag::Tensor>& inputs) {
    if (!y.requires_grad())
        FAIL("the result does not require grad: return ag::record(\"" << op << "\", y, " << inputs_text
                                                                      << ", backward)");
    const auto ops = ag::topological_order(y);
    if (ops.size() != 1)
        FAIL(op << " recorded " << ops.size() << " ops; it must be ONE op (ag::record) with the hand-written "
                << "backward, not a chain of engine ops");
    bool same_inputs = ops[0]->inputs.size() == inputs.size();
    for (size_t i = 0; same_inputs && i < inputs.size(); ++i)
        same_inputs = ops[0]->inputs[i].impl() == inputs[i].impl();
    if (!same_inputs) FAIL("the recorded op must read exactly the inputs " << inputs_text << ", in this order");
}

// The same numbers as t in a layout that is not contiguous: every element
// is followed by a NaN that a flat read of data() would pick up. Inside a
// model an op's incoming gradient often arrives like this (through a
// transpose or a view, as in attention), so a backward must call
// contiguous() before it reads dy.data().
inline ag::Tensor strided_copy(const ag::Tensor& t) {
    auto impl = std::make_shared<ag::TensorImpl>();
    impl->shape = t.shape();
    impl->strides = ag::contiguous_strides(t.shape());
    for (int64_t& s : impl->strides) s *= 2;
    impl->storage = std::make_shared<ag::Storage>(static_cast<size_t>(2 * std::max<int64_t>(t.numel(), 1)), NAN);
    const std::vector<double> values = t.to_vector();
    for (size_t i = 0; i < values.size(); ++i) (*impl->storage)[2 * i] = values[i];
    return ag::Tensor(std::move(impl));
}

// `t` holds the same numbers as `before` (a clone taken before a call):
// FAILs when the call wrote into it. A contiguous tensor's contiguous() and
// detach() share its storage, so computing "in place" on them overwrites
// the caller's input (or the incoming gradient, which the engine may hand
// to other ops as well).
inline void require_unchanged(const ag::Tensor& t, const ag::Tensor& before, const std::string& what) {
    if (!same_tensor(t, before, 0.0))
        FAIL(what << " was changed by the call (" << tensor_diff(t, before)
                  << "): write results into new tensors; contiguous() and detach() of a contiguous tensor share "
                     "its storage");
}

// y's recorded backward called directly with dy (not through the engine):
// the input gradients it returns, e.g. for a dy made by strided_copy.
inline std::vector<ag::Tensor> run_recorded_backward(const ag::Tensor& y, const ag::Tensor& dy) {
    if (!y.grad_fn()) FAIL("the result has no recorded op (does not require grad): nothing to run backward through");
    return y.grad_fn()->backward(dy);
}

// The names of the ops f ran (ag::OpLog): recorded or not, in grad mode or
// under NoGradGuard, in the forward and, when backward_too, in a backward
// from Σ out (the ops a hand-written backward calls show up too).
inline std::vector<std::string> ops_run(const std::function<ag::Tensor()>& f, bool backward_too = false) {
    ag::OpLog log;
    const ag::Tensor out = f();
    if (backward_too && out.defined() && out.requires_grad()) ag::sum(out).backward();
    return log.ops();
}

// How many numbers the graph behind y keeps alive: the sizes of the
// distinct storages its recorded ops hold as inputs (a view of a T×T
// tensor keeps all T² numbers), y's own included. What a method "keeps"
// in memory for its backward, counted rather than timed.
inline int64_t graph_storage_elements(const ag::Tensor& y) {
    std::vector<const ag::Storage*> seen;
    int64_t total = 0;
    const auto count = [&](const ag::Tensor& t) {
        if (!t.defined()) return;
        const ag::Storage* s = t.impl()->storage.get();
        if (std::find(seen.begin(), seen.end(), s) != seen.end()) return;
        seen.push_back(s);
        total += static_cast<int64_t>(s->size());
    };
    count(y);
    for (const auto& node : ag::topological_order(y))
        for (const ag::Tensor& x : node->inputs) count(x);
    return total;
}

// The most tensor storage f needed at once, in bytes, beyond what was in
// use before it ran (ag::memory_stats): what a method needs in memory,
// temporary tensors included, even those no graph keeps.
inline int64_t peak_bytes_of(const std::function<void()>& f) {
    const ag::MemoryStats before = ag::memory_stats();
    ag::reset_peak_memory();
    f();
    return static_cast<int64_t>(ag::memory_stats().peak_bytes) - static_cast<int64_t>(before.live_bytes);
}

// The matrix products f ran on this thread (ag::profile's counts): how
// many (a batched product counts once) and their FLOPs, 2·M·N·K each: how
// much a method multiplies, and in how many pieces, counted rather than
// timed.
struct Products {
    int64_t calls = 0;
    double flops = 0;
};
inline Products products_of(const std::function<void()>& f) {
    struct Counting {
        const bool was = ag::profile::enabled();
        Counting() { ag::profile::set_enabled(true); }
        ~Counting() { ag::profile::set_enabled(was); }
    } counting;
    const ag::profile::Counters& counters = ag::profile::this_thread();
    const Products before{counters.gemm_calls, counters.gemm_flops};
    f();
    return {counters.gemm_calls - before.calls, counters.gemm_flops - before.flops};
}
inline double gemm_flops_of(const std::function<void()>& f) { return products_of(f).flops; }

// Every gradient of `got` arrived and equals `want`'s; names[i] names input i.
inline void check_same_gradients(const ForwardBackward& got, const ForwardBackward& want,
                                 const std::vector<std::string>& names, double tol) {
    for (size_t i = 0; i < names.size(); ++i) {
        if (!got.grads[i].defined())
            FAIL("no gradient reached " << names[i] << ": build it from engine ops on the tensors you are given, "
                                        << "without detach() or data()");
        INFO("the gradient of " << names[i] << ": " << tensor_diff(got.grads[i], want.grads[i]));
        CHECK(same_tensor(got.grads[i], want.grads[i], tol));
    }
}

// ag::gradcheck (central differences against the backward) of f at
// `inputs`, which must require grad; on failure the message names the
// first element whose derivative is wrong.
inline void check_gradients(const std::string& what, const ag::TensorFunction& f,
                            const std::vector<ag::Tensor>& inputs) {
    const ag::GradcheckResult r = ag::gradcheck(f, inputs);
    INFO(what << ": your backward against finite differences (L(x + h) - L(x - h)) / 2h: "
              << (r.message.empty() ? "" : r.message + "; ") << "largest error " << r.max_abs_error);
    CHECK(r.ok);
}

}  // namespace grading

// CHECK_TENSOR(actual, expected, tol): same shape and values; on failure
// the message shows the worst element.
#define CHECK_TENSOR(actual, expected, tol)                                             \
    do {                                                                                \
        const ag::Tensor grading_actual_ = (actual), grading_expected_ = (expected);    \
        INFO(#actual ": " << grading::tensor_diff(grading_actual_, grading_expected_)); \
        CHECK(grading::same_tensor(grading_actual_, grading_expected_, tol));           \
    } while (false)
