// Attempt (wrong): rotates k in place: writes the rotated numbers back into the k it was given
// (through its strides) and then uses k as the rotated key, so the caller's k is changed
#include "exercises/ex16_rolling_cache.h"

#include <cmath>
#include <limits>

#include "autograd/autograd.h"

namespace ex16 {

RollingCache::RollingCache(int64_t W, int64_t head_dim, double rope_base)
    : window(W),
      base(rope_base),
      keys(ag::Tensor::zeros({W - 1, head_dim})),
      values(ag::Tensor::zeros({W - 1, head_dim})),
      positions(static_cast<size_t>(W - 1), -1) {}

int64_t RollingCache::slot_of(int64_t position) const { return position % (window - 1); }

ag::Tensor RollingCache::step(const ag::Tensor& q, const ag::Tensor& k, const ag::Tensor& v, int64_t position) {
    ag::NoGradGuard guard;
    const int64_t dh = q.size(0);
    const auto rot = [&](const ag::Tensor& x, int64_t p) {
        return ag::rope(x.contiguous().reshape({1, 1, dh}), {p}, base, ag::RopePairing::Half).reshape({dh});
    };
    const ag::Tensor qr = rot(q, position);
    ag::Tensor kr = k;
    {
        const std::vector<double> r = rot(k, position).to_vector();
        for (int64_t i = 0; i < dh; ++i) kr.data()[i * kr.strides()[0]] = r[static_cast<size_t>(i)];
    }
    const ag::Tensor vc = v.contiguous();
    std::vector<ag::Tensor> ks{kr.reshape({1, dh})}, vs{vc.reshape({1, dh})};
    for (size_t s = 0; s < positions.size(); ++s)
        if (positions[s] >= 0) {
            ks.push_back(keys.narrow(0, static_cast<int64_t>(s), 1));
            vs.push_back(values.narrow(0, static_cast<int64_t>(s), 1));
        }
    const ag::Tensor K = ag::cat(ks, 0), V = ag::cat(vs, 0);
    const ag::Tensor scores = ag::matmul(qr.reshape({1, dh}), K.t()) / std::sqrt(static_cast<double>(dh));
    const ag::Tensor out = ag::matmul(ag::softmax(scores), V).reshape({dh});
    const int64_t s = slot_of(position);
    const double* kp = kr.contiguous().data();
    const double* vp = vc.data();
    for (int64_t i = 0; i < dh; ++i) {
        keys.data()[s * dh + i] = kp[i];
        values.data()[s * dh + i] = vp[i];
    }
    positions[static_cast<size_t>(s)] = position;
    return out;
}

}  // namespace ex16
