// Attempt (wrong): copies the value into the buffer straight from v.data(), assuming v is contiguous; when v
// is a view (a narrow of a fused qkv projection) the copy picks up the numbers between its elements.
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

ag::Tensor RollingCache::step(const ag::Tensor& q, const ag::Tensor& k, const ag::Tensor& v, int64_t position) {
    ag::NoGradGuard no_grad;
    const int64_t dh = q.numel();
    const auto rot = [&](const ag::Tensor& x) {
        return ag::rope(x.reshape({1, 1, dh}), {position}, base).reshape({1, dh});
    };
    const ag::Tensor qr = rot(q), kr = rot(k);
    std::vector<ag::Tensor> ks{kr}, vs{v.reshape({1, dh})};
    for (int64_t s = 0; s < window - 1; ++s)
        if (positions[static_cast<size_t>(s)] >= 0) {
            ks.push_back(keys.narrow(0, s, 1));
            vs.push_back(values.narrow(0, s, 1));
        }
    const ag::Tensor p = ag::softmax(ag::matmul(qr, ag::cat(ks, 0).t()) / std::sqrt(static_cast<double>(dh)));
    const ag::Tensor out = ag::matmul(p, ag::cat(vs, 0)).reshape({dh});
    const int64_t slot = slot_of(position);
    std::copy_n(kr.data(), dh, keys.data() + slot * dh);  // rope's output is a fresh tensor
    std::copy_n(v.data(), dh, values.data() + slot * dh);
    positions[static_cast<size_t>(slot)] = position;
    return out;
}

}  // namespace ex16
