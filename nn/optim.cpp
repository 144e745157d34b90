#include "nn/optim.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <unordered_set>

#include <fmt/format.h>

#include "autograd/engine.h"
#include "autograd/thread_pool.h"

namespace optim {

using ag::Tensor;

// Below this many elements a loop runs on one thread (the same grain as the
// engine's pointwise kernels). Every loop here is elementwise, so the
// result does not depend on the thread count either way.
constexpr int64_t kParallelGrain = 1 << 14;

static void check_hyper(const char* what, double value, bool ok) {
    if (!ok) throw std::invalid_argument(fmt::format("optim: invalid {} {}", what, value));
}

// The gradient a step reads, or an undefined tensor when p is skipped.
static Tensor grad_of(const Tensor& p) {
    if (!p.requires_grad()) return {};
    Tensor g = p.grad();
    if (g.defined() && !g.is_contiguous())  // the engine only makes contiguous gradients
        throw std::logic_error("optim: a gradient is not contiguous");
    return g;
}

Optimizer::Optimizer(std::vector<Tensor> params, double lr_) : lr(lr_), params_(std::move(params)) {
    check_hyper("learning rate", lr, lr >= 0.0);
    std::unordered_set<const ag::TensorImpl*> seen;
    for (std::size_t i = 0; i < params_.size(); ++i) {
        const Tensor& p = params_[i];
        if (!p.defined()) throw std::invalid_argument(fmt::format("optim: parameter {} is undefined", i));
        if (!p.is_contiguous())
            throw std::invalid_argument(
                fmt::format("optim: parameter {} (shape {}) is not contiguous", i, ag::shape_str(p.shape())));
        if (!seen.insert(p.impl()).second)
            throw std::invalid_argument(fmt::format("optim: parameter {} appears twice in the list", i));
    }
}

void Optimizer::zero_grad() {
    for (Tensor& p : params_) p.zero_grad();
}

// ---- SGD --------------------------------------------------------------------

SGD::SGD(std::vector<Tensor> params, double lr_, double momentum_, double weight_decay_)
    : Optimizer(std::move(params), lr_), momentum(momentum_), weight_decay(weight_decay_), buffer_(params_.size()) {
    check_hyper("momentum", momentum, momentum >= 0.0);
    check_hyper("weight_decay", weight_decay, weight_decay >= 0.0);
}

void SGD::step() {
    ag::NoGradGuard no_grad;
    for (std::size_t i = 0; i < params_.size(); ++i) {
        const Tensor g_t = grad_of(params_[i]);
        if (!g_t.defined()) continue;
        const int64_t n = params_[i].numel();
        double* p = params_[i].data();
        const double* g = g_t.data();
        // torch.optim.SGD sets buf = d on the first step; a zero buffer does
        // the same (0·μ + d = d).
        ag::Storage& buf = buffer_[i];
        if (momentum != 0.0 && buf.empty()) buf.assign(static_cast<std::size_t>(n), 0.0);
        double* b = buf.data();
        // Hyperparameters as locals: the loop then never rereads them
        // through `this`, which p might alias as far as the compiler knows.
        const double rate = lr, mu = momentum, wd = weight_decay;
        ag::parallel_for(n, kParallelGrain, [=](int64_t begin, int64_t end) {
            for (int64_t j = begin; j < end; ++j) {
                double d = wd != 0.0 ? g[j] + wd * p[j] : g[j];
                if (mu != 0.0) {
                    b[j] = b[j] * mu + d;
                    d = b[j];
                }
                p[j] -= rate * d;
            }
        });
    }
}

// ---- AdamW ------------------------------------------------------------------

// x / b, bit for bit, for a divisor b that a whole loop shares: from its
// reciprocal y = 1/b (rounded to nearest) by multiplications. AdamW's step
// is bound by the divider (a square root and two divisions per weight; a
// multiplication costs a fraction of a division), and this takes one of
// the divisions off it. q0 = x·y is within 1.5 ulp of x/b; one correction
// q1 = q0 + (x - b·q0)·y, with the residual from an fma, leaves only
// rounding errors far below an ulp, so q1 is within 1 ulp; and from a
// quotient within 1 ulp and a reciprocal within ½ ulp one more correction
// gives the correctly rounded quotient, the division's own result
// (Markstein's theorem: P. W. Markstein, IBM J. Res. Develop. 34 (1990)
// 111-119). That needs the residuals to be exact, so nothing may underflow:
// here x = √v is 0 or at least 2^-537 (the root of the smallest subnormal)
// and b = √(1 - β2^t) is in (0, 1]. For x = +inf (v overflowed) q0 = inf is
// already the quotient but a residual is inf - inf = NaN, so a NaN residual
// counts as 0. (Written as selects between a residual and 0, with the
// arithmetic after them done for every element, so that the loop stays
// branch-free and vectorises: see autograd/kernels/vmath.h.)
//
// Only where the CPU has an FMA instruction: elsewhere (the portable
// x86-64-v2 build) std::fma is glibc's software routine, and the division
// itself is faster (there the step took 11.1 ns a weight this way against
// 2.5 with the division, Zen 4); both give the same bits.
#if defined(__FMA__) || defined(__ARM_FEATURE_FMA)
constexpr bool kDivideByReciprocal = true;
#else
constexpr bool kDivideByReciprocal = false;
#endif

static inline double divide_by(double x, double b, double y) {
    if (!kDivideByReciprocal) return x / b;
    const double q0 = x * y;
    const double r0 = std::fma(-b, q0, x);
    const double q1 = std::fma(r0 == r0 ? r0 : 0.0, y, q0);
    const double r1 = std::fma(-b, q1, x);
    return std::fma(r1 == r1 ? r1 : 0.0, y, q1);
}

AdamW::AdamW(std::vector<Tensor> params, double lr_, double beta1_, double beta2_, double eps_, double weight_decay_)
    : Optimizer(std::move(params), lr_),
      beta1(beta1_),
      beta2(beta2_),
      eps(eps_),
      weight_decay(weight_decay_),
      state_(params_.size()) {
    check_hyper("beta1", beta1, beta1 >= 0.0 && beta1 < 1.0);
    check_hyper("beta2", beta2, beta2 >= 0.0 && beta2 < 1.0);
    check_hyper("eps", eps, eps >= 0.0);
    check_hyper("weight_decay", weight_decay, weight_decay >= 0.0);
}

void AdamW::step() {
    ag::NoGradGuard no_grad;
    // One update per element; every element is independent, so the work of
    // all parameters is cut into chunks that the threads share (a small
    // model's tensors are each too small to be worth splitting alone).
    struct Chunk {
        double *p, *m, *v;
        const double* g;
        int64_t n;
        double decay, step_size, bias_correction2_sqrt, inverse;  // inverse = 1 / bias_correction2_sqrt
    };
    std::vector<Chunk> chunks;
    std::vector<Tensor> grads;  // keeps each gradient alive during the update
    constexpr int64_t kChunk = 4096;
    for (std::size_t i = 0; i < params_.size(); ++i) {
        const Tensor g_t = grad_of(params_[i]);
        if (!g_t.defined()) continue;
        grads.push_back(g_t);
        const int64_t n = params_[i].numel();
        State& s = state_[i];
        if (s.step == 0) {
            s.m.assign(static_cast<std::size_t>(n), 0.0);
            s.v.assign(static_cast<std::size_t>(n), 0.0);
        }
        ++s.step;
        // The scalars and the order of every operation are those of
        // torch/optim/adamw.py (_single_tensor_adamw), so that a run matches
        // PyTorch's to rounding: m is updated by lerp_, v by mul_ and
        // addcmul_, p by mul_ and addcdiv_.
        const double t = static_cast<double>(s.step);
        const double bias_correction1 = 1.0 - std::pow(beta1, t);
        const double bias_correction2_sqrt = std::sqrt(1.0 - std::pow(beta2, t));
        for (int64_t j = 0; j < n; j += kChunk)
            chunks.push_back({params_[i].data() + j, s.m.data() + j, s.v.data() + j, g_t.data() + j,
                              std::min(kChunk, n - j), 1.0 - lr * weight_decay, lr / bias_correction1,
                              bias_correction2_sqrt, 1.0 / bias_correction2_sqrt});
    }
    // lerp(m, g, w) = m + w (g - m), which PyTorch computes from the far
    // end, g - (g - m)(1 - w), when w >= 0.5: both are start + weight·(g - m)
    // (the far end's product and subtraction round the same either way).
    const double w = 1.0 - beta1;
    const bool lerp_small = w < 0.5;
    const double lerp_weight = lerp_small ? w : -(1.0 - w);
    const double b2 = beta2, one_minus_b2 = 1.0 - beta2, epsilon = eps;
    const auto count = static_cast<int64_t>(chunks.size());
    const Chunk* all = chunks.data();
    ag::parallel_for(count, 2, [=](int64_t first, int64_t last) {
        for (int64_t c = first; c < last; ++c) {
            // The chunk's fields as locals: p[j] might alias the Chunk as far
            // as the compiler knows, and rereading them each iteration keeps
            // the loop from vectorising.
            const Chunk& k = all[c];
            double *p = k.p, *m = k.m, *v = k.v;
            const double* g = k.g;
            const double* lerp_start = lerp_small ? m : g;
            const double decay = k.decay, step_size = k.step_size, bc2_sqrt = k.bias_correction2_sqrt,
                         inverse = k.inverse;
            const int64_t n = k.n;
#pragma omp simd
            for (int64_t j = 0; j < n; ++j) {
                p[j] *= decay;
                m[j] = lerp_start[j] + lerp_weight * (g[j] - m[j]);
                v[j] = v[j] * b2 + one_minus_b2 * g[j] * g[j];
                const double denom = divide_by(std::sqrt(v[j]), bc2_sqrt, inverse) + epsilon;  // √v / bc2_sqrt
                p[j] += -step_size * m[j] / denom;
            }
        }
    });
}

// ---- clipping ---------------------------------------------------------------

double clip_grad_norm(const std::vector<Tensor>& params, double max_norm) {
    std::vector<Tensor> grads;
    for (const Tensor& p : params)
        if (Tensor g = grad_of(p); g.defined()) grads.push_back(g);
    double sum_sq = 0.0;  // one thread, parameter order: the same sum for any thread count
    for (const Tensor& g : grads) {
        const double* x = g.data();
        for (int64_t j = 0, n = g.numel(); j < n; ++j) sum_sq += x[j] * x[j];
    }
    const double total = std::sqrt(sum_sq);
    const double coef = max_norm / (total + 1e-6);
    if (coef < 1.0) {
        ag::NoGradGuard no_grad;
        for (Tensor& g : grads) {
            double* x = g.data();
            const int64_t n = g.numel();
            ag::parallel_for(n, kParallelGrain, [=](int64_t begin, int64_t end) {
                for (int64_t j = begin; j < end; ++j) x[j] *= coef;
            });
        }
    }
    return total;
}

}  // namespace optim
