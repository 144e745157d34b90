// Attempt (wrong): follows the slides' "position i goes to slot i mod W" with a buffer of W slots, but
// attends before writing the new token, to every filled slot and the new token's own key: slot p mod W
// still holds position p-W, which has left the window, so a full buffer shows the query W+1 tokens.
// grade says: your queries see W+1 tokens: all W slots
#include "exercises/ex16_rolling_cache.h"

#include <algorithm>
#include <cmath>

#include "autograd/autograd.h"
#include "exercises/not_implemented.h"

namespace ex16 {

RollingCache::RollingCache(int64_t W, int64_t head_dim, double rope_base)
    : window(W),
      base(rope_base),
      keys(ag::Tensor::zeros({W, head_dim})),
      values(ag::Tensor::zeros({W, head_dim})),
      positions(static_cast<size_t>(W), -1) {}

int64_t RollingCache::slot_of(int64_t position) const { return position % window; }

ag::Tensor RollingCache::step(const ag::Tensor& q, const ag::Tensor& k, const ag::Tensor& v, int64_t position) {
    ag::NoGradGuard no_grad;
    const int64_t dh = q.numel();
    const auto rot = [&](const ag::Tensor& x) {
        return ag::rope(x.reshape({1, 1, dh}), {position}, base).reshape({1, dh});
    };
    const ag::Tensor qr = rot(q), kr = rot(k);
    std::vector<ag::Tensor> ks{kr}, vs{v.reshape({1, dh})};
    for (int64_t s = 0; s < window; ++s)
        if (positions[static_cast<size_t>(s)] >= 0) {
            ks.push_back(keys.narrow(0, s, 1));
            vs.push_back(values.narrow(0, s, 1));
        }
    const ag::Tensor p = ag::softmax(ag::matmul(qr, ag::cat(ks, 0).t()) / std::sqrt(static_cast<double>(dh)));
    const ag::Tensor out = ag::matmul(p, ag::cat(vs, 0)).reshape({dh});
    const int64_t slot = slot_of(position);
    const ag::Tensor kc = kr.contiguous(), vc = v.contiguous();
    std::copy_n(kc.data(), dh, keys.data() + slot * dh);
    std::copy_n(vc.data(), dh, values.data() + slot * dh);
    positions[static_cast<size_t>(slot)] = position;
    return out;
}

}  // namespace ex16
