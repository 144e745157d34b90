// Pointwise ops: each forward next to its derivative.
// Binary ops broadcast; their backward returns gradients of the broadcast
// shape and the engine sums them down to each input's shape.
#include <cmath>

#include "autograd/kernels/vmath.h"
#include "autograd/ops/common.h"

namespace ag {

using detail::broadcast_zip;
using detail::Grads;
using detail::Loop;
using detail::map;
using detail::zip;

namespace detail {

Shape broadcast_shapes(const char* op, const Shape& a, const Shape& b) {
    const size_t n = std::max(a.size(), b.size());
    Shape out(n);
    for (size_t i = 0; i < n; ++i) {  // i counts from the right
        const int64_t sa = i < a.size() ? a[a.size() - 1 - i] : 1;
        const int64_t sb = i < b.size() ? b[b.size() - 1 - i] : 1;
        if (sa != sb && sa != 1 && sb != 1)
            fail(op, "{} and {} do not broadcast (sizes {} and {} differ)", shape_str(a), shape_str(b), sa, sb);
        out[n - 1 - i] = sa == 1 ? sb : sa;
    }
    return out;
}

Tensor expand_view(const Tensor& x, const Shape& shape) {
    const Shape& s = x.shape();
    if (s.size() > shape.size() || broadcast_shapes("expand", s, shape) != shape)
        fail("expand", "cannot expand {} to {}", shape_str(s), shape_str(shape));
    auto impl = std::make_shared<TensorImpl>(*x.impl());
    impl->grad_fn = nullptr;
    impl->grad = nullptr;
    impl->requires_grad = false;
    impl->shape = shape;
    impl->strides.assign(shape.size(), 0);
    const size_t lead = shape.size() - s.size();
    for (size_t i = 0; i < s.size(); ++i) impl->strides[lead + i] = s[i] == shape[lead + i] ? x.strides()[i] : 0;
    return Tensor(std::move(impl));
}

}  // namespace detail

// ---- arithmetic ---------------------------------------------------------------

// d(a+b) = da + db
Tensor add(const Tensor& a, const Tensor& b) {
    Tensor out = broadcast_zip("add", a, b, [](double x, double y) { return x + y; });
    return record("add", out, {a, b}, [](const Tensor& g) { return Grads{g, g}; });
}

// d(a-b) = da - db
Tensor sub(const Tensor& a, const Tensor& b) {
    Tensor out = broadcast_zip("sub", a, b, [](double x, double y) { return x - y; });
    return record("sub", out, {a, b}, [b](const Tensor& g) { return Grads{g, b.requires_grad() ? neg(g) : Tensor()}; });
}

// d(ab) = b da + a db
Tensor mul(const Tensor& a, const Tensor& b) {
    Tensor out = broadcast_zip("mul", a, b, [](double x, double y) { return x * y; });
    return record("mul", out, {a, b}, [a, b](const Tensor& g) {
        return Grads{a.requires_grad() ? mul(g, b) : Tensor(), b.requires_grad() ? mul(g, a) : Tensor()};
    });
}

// d(a/b) = da / b - a db / b²
Tensor div(const Tensor& a, const Tensor& b) {
    Tensor out = broadcast_zip("div", a, b, [](double x, double y) { return x / y; });
    return record("div", out, {a, b}, [a, b, q = out.detach()](const Tensor& g) {
        // -a/b² = -(a/b)/b = -q/b
        return Grads{a.requires_grad() ? div(g, b) : Tensor(), b.requires_grad() ? neg(div(mul(g, q), b)) : Tensor()};
    });
}

Tensor add(const Tensor& a, double s) {
    Tensor out = map(a, [s](double x) { return x + s; });
    return record("add_scalar", out, {a}, [](const Tensor& g) { return Grads{g}; });
}

Tensor mul(const Tensor& a, double s) {
    Tensor out = map(a, [s](double x) { return x * s; });
    return record("mul_scalar", out, {a}, [s](const Tensor& g) { return Grads{mul(g, s)}; });
}

Tensor neg(const Tensor& a) {
    Tensor out = map(a, [](double x) { return -x; });
    return record("neg", out, {a}, [](const Tensor& g) { return Grads{neg(g)}; });
}

// d(xᵖ) = p xᵖ⁻¹ dx
Tensor pow(const Tensor& a, double p) {
    Tensor out = map<Loop::Scalar>(a, [p](double x) { return std::pow(x, p); });
    return record("pow", out, {a}, [a, p](const Tensor& g) {
        return Grads{zip<Loop::Scalar>(g, a, [p](double gi, double x) { return gi * p * std::pow(x, p - 1.0); })};
    });
}

// ---- elementary functions -----------------------------------------------------

// d(eˣ) = eˣ dx: the backward reuses the output.
Tensor exp(const Tensor& a) {
    Tensor y = map(a, [](double x) AG_ELEMENTWISE { return vmath::exp(x); });
    return record("exp", y, {a}, [y = y.detach()](const Tensor& g) { return Grads{mul(g, y)}; });
}

// d(log x) = dx / x
Tensor log(const Tensor& a) {
    Tensor y = map(a, [](double x) AG_ELEMENTWISE { return vmath::log(x); });
    return record("log", y, {a}, [a](const Tensor& g) { return Grads{div(g, a)}; });
}

// d(√x) = dx / (2√x)
Tensor sqrt(const Tensor& a) {
    Tensor y = map(a, [](double x) { return std::sqrt(x); });
    return record("sqrt", y, {a}, [y = y.detach()](const Tensor& g) {
        return Grads{zip(g, y, [](double gi, double yi) { return gi / (2.0 * yi); })};
    });
}

// d(tanh x) = (1 - tanh² x) dx
Tensor tanh(const Tensor& a) {
    Tensor y = map(a, [](double x) AG_ELEMENTWISE { return vmath::tanh(x); });
    return record("tanh", y, {a}, [y = y.detach()](const Tensor& g) {
        return Grads{zip(g, y, [](double gi, double yi) { return gi * (1.0 - yi * yi); })};
    });
}

// σ(x) = 1 / (1 + e⁻ˣ), dσ = σ(1 - σ) dx  (vmath's form never overflows)
static inline AG_ELEMENTWISE double sigmoid_of(double x) { return vmath::sigmoid(x); }

Tensor sigmoid(const Tensor& a) {
    Tensor y = map(a, [](double x) AG_ELEMENTWISE { return sigmoid_of(x); });
    return record("sigmoid", y, {a}, [y = y.detach()](const Tensor& g) {
        return Grads{zip(g, y, [](double gi, double s) { return gi * s * (1.0 - s); })};
    });
}

// relu(x) = max(x, 0); its derivative is the step 1[x > 0]
Tensor relu(const Tensor& a) {
    Tensor y = map(a, [](double x) { return x > 0 ? x : 0.0; });
    return record("relu", y, {a}, [a](const Tensor& g) {
        return Grads{zip(g, a, [](double gi, double x) { return x > 0 ? gi : 0.0; })};
    });
}

// An activation y = f(x) whose backward is g ⊙ f'(x): while a graph is
// being recorded, the forward pass also computes f'(x) (sharing the
// expensive erf / exp with f), so the backward is one multiply.
// f(x, slope) returns f(x) and sets slope = f'(x).
template <typename F>
static Tensor activation(const char* op, const Tensor& a, F f) {
    if (!(GradMode::is_enabled() && a.requires_grad()))  // logged (OpLog), not recorded
        return record(op,
                      map(a,
                          [&](double x) AG_ELEMENTWISE {
                              double unused;
                              return f(x, unused);
                          }),
                      {a}, {});
    const Tensor ac = a.contiguous();
    Tensor y = empty(a.shape()), slope = empty(a.shape());
    const double* px = ac.data();
    double *py = y.data(), *ps = slope.data();
    detail::parallel_for(y.numel(), detail::kPointwiseGrain, [&, px, py, ps](int64_t b, int64_t e) {
#pragma omp simd
        for (int64_t i = b; i < e; ++i) py[i] = f(px[i], ps[i]);
    });
    return record(op, y, {a}, [slope](const Tensor& g) { return Grads{mul(g, slope)}; });
}

// GELU, exact: gelu(x) = x Φ(x), Φ(x) = ½(1 + erf(x/√2));
// gelu'(x) = Φ(x) + x φ(x), φ(x) = e^(-x²/2) / √(2π)
Tensor gelu(const Tensor& a) {
    return activation("gelu", a, [](double x, double& slope) AG_ELEMENTWISE {
        double gauss;  // e^(-x²/2), from the same evaluation as Φ
        const double cdf = vmath::normal_cdf(x, gauss);
        const double pdf = gauss * (0.5 * M_2_SQRTPI * M_SQRT1_2);  // 1/√(2π)
        slope = cdf + x * pdf;
        return x * cdf;
    });
}

// §3.2 SiLU (the "Swish" in SwiGLU): silu(x) = x σ(x);
// silu'(x) = σ(x) (1 + x (1 - σ(x)))
Tensor silu(const Tensor& a) {
    return activation("silu", a, [](double x, double& slope) AG_ELEMENTWISE {
        const double s = sigmoid_of(x);
        slope = s * (1.0 + x * (1.0 - s));
        return x * s;
    });
}

// §3.2 SwiGLU's gating, fused: out = silu(a) ⊙ b, so one pass instead of
// three (silu, multiply, and their backward):
//   da = g ⊙ b ⊙ silu'(a),   db = g ⊙ silu(a),   silu'(a) = σ(a)(1 + a(1 - σ(a))).
// While a graph is recorded the forward keeps σ(a) for the backward, so σ
// is evaluated once per element, not twice.
Tensor swiglu(const Tensor& gate, const Tensor& up) {
    if (gate.shape() != up.shape())
        detail::fail("swiglu", "gate {} and up {} differ", shape_str(gate.shape()), shape_str(up.shape()));
    const auto silu_times = [](double x, double y) AG_ELEMENTWISE { return x * sigmoid_of(x) * y; };
    if (!(GradMode::is_enabled() && (gate.requires_grad() || up.requires_grad())))
        return record("swiglu", zip(gate, up, silu_times), {gate, up}, {});  // logged (OpLog), not recorded
    const Tensor a = detail::saved(gate), b = detail::saved(up);
    Tensor out = empty(a.shape()), sig = empty(a.shape());
    {
        const double *pa = a.data(), *pb = b.data();
        double *po = out.data(), *ps = sig.data();
        detail::parallel_for(out.numel(), detail::kPointwiseGrain, [=](int64_t s0, int64_t s1) {
#pragma omp simd
            for (int64_t i = s0; i < s1; ++i) {
                const double x = pa[i], s = sigmoid_of(x);
                ps[i] = s;
                po[i] = x * s * pb[i];
            }
        });
    }
    return record("swiglu", out, {gate, up}, [a, b, sig](const Tensor& g) {
        const Tensor gc = g.contiguous();
        Tensor da = empty(a.shape()), db = empty(b.shape());
        const double *pg = gc.data(), *pa = a.data(), *pb = b.data(), *ps = sig.data();
        double *pda = da.data(), *pdb = db.data();
        detail::parallel_for(da.numel(), detail::kPointwiseGrain, [=](int64_t s0, int64_t s1) {
#pragma omp simd
            for (int64_t i = s0; i < s1; ++i) {
                const double x = pa[i], s = ps[i];
                pda[i] = pg[i] * pb[i] * s * (1.0 + x * (1.0 - s));
                pdb[i] = pg[i] * x * s;
            }
        });
        return Grads{da, db};
    });
}

// ---- selection ------------------------------------------------------------------

// where(c, a, b) = a where c ≠ 0 else b; the gradient goes to the branch taken.
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
    const Shape shape =
        detail::broadcast_shapes("where", cond.shape(), detail::broadcast_shapes("where", a.shape(), b.shape()));
    Tensor out = empty(shape, "where");
    const Tensor c = detail::expand_view(cond.contiguous(), shape).contiguous();
    const Tensor ta = detail::expand_view(a.contiguous(), shape).contiguous();
    const Tensor tb = detail::expand_view(b.contiguous(), shape).contiguous();
    for (int64_t i = 0; i < out.numel(); ++i) out.data()[i] = c.data()[i] != 0 ? ta.data()[i] : tb.data()[i];
    return record("where", out, {a, b}, [c](const Tensor& g) {
        return Grads{zip(g, c, [](double gi, double ci) { return ci != 0 ? gi : 0.0; }),
                     zip(g, c, [](double gi, double ci) { return ci != 0 ? 0.0 : gi; })};
    });
}

// masked_fill(x, m, v) = v where m ≠ 0 else x; x's gradient is masked.
Tensor masked_fill(const Tensor& x, const Tensor& mask, double value) {
    if (detail::broadcast_shapes("masked_fill", x.shape(), mask.shape()) != x.shape())
        detail::fail("masked_fill", "mask {} does not broadcast to the input {}", shape_str(mask.shape()),
                     shape_str(x.shape()));
    const Tensor m = detail::expand_view(mask.contiguous(), x.shape()).contiguous();
    Tensor out = zip(x, m, [value](double xi, double mi) { return mi != 0 ? value : xi; });
    return record("masked_fill", out, {x}, [m](const Tensor& g) {
        return Grads{zip(g, m, [](double gi, double mi) { return mi != 0 ? 0.0 : gi; })};
    });
}

// ---- operators -------------------------------------------------------------------

Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
Tensor operator-(const Tensor& a) { return neg(a); }
Tensor operator+(const Tensor& a, double s) { return add(a, s); }
Tensor operator+(double s, const Tensor& a) { return add(a, s); }
Tensor operator-(const Tensor& a, double s) { return add(a, -s); }
Tensor operator-(double s, const Tensor& a) { return sub(Tensor::scalar(s), a); }
Tensor operator*(const Tensor& a, double s) { return mul(a, s); }
Tensor operator*(double s, const Tensor& a) { return mul(a, s); }
Tensor operator/(const Tensor& a, double s) { return div(a, Tensor::scalar(s)); }
Tensor operator/(double s, const Tensor& a) { return div(Tensor::scalar(s), a); }

// ---- comparisons for tests and lessons ---------------------------------------------

double max_abs(const Tensor& x) {
    double m = 0.0;
    for (double v : x.to_vector()) m = std::max(m, std::abs(v));
    return m;
}

double max_abs_diff(const Tensor& a, const Tensor& b) {
    if (a.shape() != b.shape())
        detail::fail("max_abs_diff", "shapes {} and {} differ", shape_str(a.shape()), shape_str(b.shape()));
    const auto va = a.to_vector(), vb = b.to_vector();
    double m = 0.0;
    for (size_t i = 0; i < va.size(); ++i) {
        const double d = std::abs(va[i] - vb[i]);
        if (std::isnan(d)) return d;
        m = std::max(m, d);
    }
    return m;
}

}  // namespace ag
