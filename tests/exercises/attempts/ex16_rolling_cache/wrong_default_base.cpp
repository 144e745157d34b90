// Attempt (wrong): keeps the base in the cache but calls ag::rope with its default base, so a cache made
// with another RoPE base (Llama 3's 500,000) still turns by 10000^(-2i/d).
#include "exercises/ex16_rolling_cache.h"

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
    const ag::Tensor qr = ag::rope(q.reshape({1, 1, dh}), {position}).reshape({1, dh});
    const ag::Tensor kr = ag::rope(k.reshape({1, 1, dh}), {position}).reshape({1, dh});
    std::vector<ag::Tensor> ks{kr}, vs{v.reshape({1, dh})};
    for (int64_t s = 0; s < window - 1; ++s)
        if (positions[static_cast<size_t>(s)] != -1) {
            ks.push_back(keys.narrow(0, s, 1));
            vs.push_back(values.narrow(0, s, 1));
        }
    const ag::Tensor scores = ag::matmul(qr, ag::cat(ks, 0).t()) / std::sqrt(static_cast<double>(dh));
    const ag::Tensor out = ag::matmul(ag::softmax(scores), ag::cat(vs, 0));
    const int64_t slot = slot_of(position);
    const ag::Tensor kc = kr.contiguous(), vc = v.contiguous();
    for (int64_t i = 0; i < dh; ++i) {
        keys.data()[slot * dh + i] = kc.data()[i];
        values.data()[slot * dh + i] = vc.data()[i];
    }
    positions[static_cast<size_t>(slot)] = position;
    return out.reshape({dh});
}

}  // namespace ex16
