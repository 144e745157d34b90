// Attempt (wrong): rotates q and k with the slides' element-wise RoPE, pairing dims 2i and 2i+1
// (Interleaved), where the statement asks for pairing Half (dim i with i + head_dim/2).
#include "exercises/ex16_rolling_cache.h"

#include <algorithm>
#include <cmath>

#include "autograd/autograd.h"
#include "exercises/not_implemented.h"

namespace ex16 {

RollingCache::RollingCache(int64_t W, int64_t head_dim, double rope_base)
    : window(W),
      base(rope_base),
      keys(ag::Tensor::zeros({W - 1, head_dim})),
      values(ag::Tensor::zeros({W - 1, head_dim})),
      positions(static_cast<size_t>(W - 1), -1) {}

int64_t RollingCache::slot_of(int64_t position) const { return position % (window - 1); }

namespace {
// x_{2i}, x_{2i+1} turned by p·θ_i, θ_i = base^(-2i/d)
ag::Tensor rotate(const ag::Tensor& x, int64_t p, double base) {
    const ag::Tensor xc = x.contiguous();
    const int64_t d = xc.numel();
    ag::Tensor y = ag::Tensor::zeros({1, d});
    for (int64_t i = 0; i < d / 2; ++i) {
        const double theta = std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(d));
        const double a = static_cast<double>(p) * theta;
        const double x0 = xc.data()[2 * i], x1 = xc.data()[2 * i + 1];
        y.data()[2 * i] = std::cos(a) * x0 - std::sin(a) * x1;
        y.data()[2 * i + 1] = std::sin(a) * x0 + std::cos(a) * x1;
    }
    return y;
}
}  // namespace

ag::Tensor RollingCache::step(const ag::Tensor& q, const ag::Tensor& k, const ag::Tensor& v, int64_t position) {
    ag::NoGradGuard no_grad;
    const int64_t dh = q.numel();
    const ag::Tensor qr = rotate(q, position, base), kr = rotate(k, position, base);
    std::vector<ag::Tensor> ks{kr}, vs{v.reshape({1, dh})};
    for (int64_t s = 0; s < window - 1; ++s)
        if (positions[static_cast<size_t>(s)] >= 0) {
            ks.push_back(keys.narrow(0, s, 1));
            vs.push_back(values.narrow(0, s, 1));
        }
    const ag::Tensor p = ag::softmax(ag::matmul(qr, ag::cat(ks, 0).t()) / std::sqrt(static_cast<double>(dh)));
    const ag::Tensor out = ag::matmul(p, ag::cat(vs, 0)).reshape({dh});
    const int64_t slot = slot_of(position);
    const ag::Tensor vc = v.contiguous();
    std::copy_n(kr.data(), dh, keys.data() + slot * dh);
    std::copy_n(vc.data(), dh, values.data() + slot * dh);
    positions[static_cast<size_t>(slot)] = position;
    return out;
}

}  // namespace ex16
