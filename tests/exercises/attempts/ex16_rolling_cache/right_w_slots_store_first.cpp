// Attempt (right): the slides' "position i goes to slot i mod W" as it stands: W slots, the new token's
// rotated key and its value written first into slot p mod W (over position p-W, which has just left the
// window), then the query attends to every filled slot: the window of W, the new token's own key among
// them. Between steps the buffer holds W positions, the oldest of which no later query sees.
#include "exercises/ex16_rolling_cache.h"

#include <algorithm>
#include <cmath>
#include <vector>

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
    const ag::Tensor qr = ag::rope(q.reshape({1, 1, dh}), {position}, base).reshape({1, dh});
    const ag::Tensor kr = ag::rope(k.reshape({1, 1, dh}), {position}, base).contiguous();
    const ag::Tensor vc = v.contiguous();
    // 1. the new token into its slot: the window is now exactly what the buffer holds
    const int64_t slot = slot_of(position);
    std::copy_n(kr.data(), dh, keys.data() + slot * dh);
    std::copy_n(vc.data(), dh, values.data() + slot * dh);
    positions[static_cast<size_t>(slot)] = position;
    // 2. attend to every filled slot
    std::vector<ag::Tensor> ks, vs;
    for (int64_t s = 0; s < window; ++s)
        if (positions[static_cast<size_t>(s)] >= 0) {
            ks.push_back(keys.narrow(0, s, 1));
            vs.push_back(values.narrow(0, s, 1));
        }
    const ag::Tensor p = ag::softmax(ag::matmul(qr, ag::cat(ks, 0).t()) / std::sqrt(static_cast<double>(dh)));
    return ag::matmul(p, ag::cat(vs, 0)).reshape({dh});
}

}  // namespace ex16
