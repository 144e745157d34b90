// Attempt (wrong): takes the new token's position to be the number of tokens in the cache (misconception 9):
// right until the buffer is full, then every new token is rotated by W-1 instead of its absolute position.
#include "exercises/ex16_rolling_cache.h"

#include <algorithm>
#include <cmath>

#include "autograd/autograd.h"
#include "exercises/not_implemented.h"

namespace ex16 {

RollingCache::RollingCache(int64_t W, int64_t head_dim, double rope_base) {
    window = W;
    base = rope_base;
    keys = ag::Tensor::zeros({W - 1, head_dim});
    values = ag::Tensor::zeros({W - 1, head_dim});
    positions.assign(static_cast<size_t>(W - 1), -1);
}

int64_t RollingCache::slot_of(int64_t position) const { return position % (window - 1); }

ag::Tensor RollingCache::step(const ag::Tensor& q, const ag::Tensor& k, const ag::Tensor& v, int64_t position) {
    ag::NoGradGuard guard;
    const int64_t d = q.numel();
    // the new token comes right after what the cache holds
    const int64_t length = std::count_if(positions.begin(), positions.end(), [](int64_t p) { return p >= 0; });
    const ag::Tensor qr = ag::rope(q.reshape({1, 1, d}), {length}, base).reshape({1, d});
    const ag::Tensor kr = ag::rope(k.reshape({1, 1, d}), {length}, base).reshape({1, d});
    std::vector<ag::Tensor> ks{kr}, vs{v.reshape({1, d})};
    for (size_t s = 0; s < positions.size(); ++s)
        if (positions[s] >= 0) {
            ks.push_back(keys.narrow(0, static_cast<int64_t>(s), 1));
            vs.push_back(values.narrow(0, static_cast<int64_t>(s), 1));
        }
    const ag::Tensor w = ag::softmax(ag::matmul(qr, ag::cat(ks, 0).t()) * (1.0 / std::sqrt(static_cast<double>(d))));
    const ag::Tensor out = ag::matmul(w, ag::cat(vs, 0)).reshape({d});
    const int64_t s = slot_of(position);
    const ag::Tensor kc = kr.contiguous(), vc = v.contiguous();
    std::copy(kc.data(), kc.data() + d, keys.data() + s * d);
    std::copy(vc.data(), vc.data() + d, values.data() + s * d);
    positions[static_cast<size_t>(s)] = position;
    return out;
}

}  // namespace ex16
