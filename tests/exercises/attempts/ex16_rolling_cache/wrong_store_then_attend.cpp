// Attempt (wrong): stores the new key and value first and then attends to whatever the buffer holds, so the
// new token overwrites position p-(W-1), which this query should still see: it sees W-1 tokens, not W.
// grade says: your queries see W-1 tokens
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
      keys(ag::Tensor::zeros({W - 1, head_dim})),
      values(ag::Tensor::zeros({W - 1, head_dim})),
      positions(static_cast<size_t>(W - 1), -1) {}

int64_t RollingCache::slot_of(int64_t position) const { return position % (window - 1); }

ag::Tensor RollingCache::step(const ag::Tensor& q, const ag::Tensor& k, const ag::Tensor& v, int64_t position) {
    ag::NoGradGuard no_grad;
    const int64_t dh = q.numel();
    const ag::Tensor qr = ag::rope(q.reshape({1, 1, dh}), {position}, base).reshape({1, dh});
    const ag::Tensor kr = ag::rope(k.reshape({1, 1, dh}), {position}, base).contiguous();
    const ag::Tensor vc = v.contiguous();
    // 1. put the new token into the buffer
    const int64_t slot = slot_of(position);
    std::copy_n(kr.data(), dh, keys.data() + slot * dh);
    std::copy_n(vc.data(), dh, values.data() + slot * dh);
    positions[static_cast<size_t>(slot)] = position;
    // 2. attend to everything in the buffer (the new token is in there now)
    std::vector<ag::Tensor> ks, vs;
    for (int64_t s = 0; s < window - 1; ++s)
        if (positions[static_cast<size_t>(s)] >= 0) {
            ks.push_back(keys.narrow(0, s, 1));
            vs.push_back(values.narrow(0, s, 1));
        }
    const ag::Tensor p = ag::softmax(ag::matmul(qr, ag::cat(ks, 0).t()) / std::sqrt(static_cast<double>(dh)));
    return ag::matmul(p, ag::cat(vs, 0)).reshape({dh});
}

}  // namespace ex16
