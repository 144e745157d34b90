// Attempt (wrong): computes the attention weights by hand as exp(s_j) / Σ exp(s_j) without subtracting the
// largest score, which overflows to inf / inf = NaN once a score passes ~709.
#include "exercises/ex16_rolling_cache.h"

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
    const ag::Tensor qr = ag::rope(q.reshape({1, 1, dh}), {position}, base).contiguous();
    const ag::Tensor kr = ag::rope(k.reshape({1, 1, dh}), {position}, base).contiguous();
    const ag::Tensor vc = v.contiguous();
    // (weight, value row) for the new token and every filled slot
    std::vector<double> weight;
    std::vector<const double*> rows;
    const auto score = [&](const double* key) {
        double s = 0.0;
        for (int64_t i = 0; i < dh; ++i) s += qr.data()[i] * key[i];
        return s / std::sqrt(static_cast<double>(dh));
    };
    weight.push_back(std::exp(score(kr.data())));
    rows.push_back(vc.data());
    for (int64_t s = 0; s < window - 1; ++s)
        if (positions[static_cast<size_t>(s)] >= 0) {
            weight.push_back(std::exp(score(keys.data() + s * dh)));
            rows.push_back(values.data() + s * dh);
        }
    double total = 0.0;
    for (double w : weight) total += w;
    ag::Tensor out = ag::Tensor::zeros({dh});
    for (size_t j = 0; j < weight.size(); ++j)
        for (int64_t i = 0; i < dh; ++i) out.data()[i] += weight[j] / total * rows[j][i];
    const int64_t slot = slot_of(position);
    for (int64_t i = 0; i < dh; ++i) {
        keys.data()[slot * dh + i] = kr.data()[i];
        values.data()[slot * dh + i] = vc.data()[i];
    }
    positions[static_cast<size_t>(slot)] = position;
    return out;
}

}  // namespace ex16
