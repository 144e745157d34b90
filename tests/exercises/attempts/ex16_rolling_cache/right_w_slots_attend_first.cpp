// Attempt (right): W slots, position p in slot p mod W, but the order of the header's step(): the query
// attends first, to its own key and to the cached positions still in its window (p-W+1 … p-1; the slot
// it is about to overwrite holds p-W, which it skips), then the new token is stored. The scores are
// written out by hand, softmax with the row's max subtracted.
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
    const ag::Tensor qr = ag::rope(q.reshape({1, 1, dh}), {position}, base).contiguous();
    const ag::Tensor kr = ag::rope(k.reshape({1, 1, dh}), {position}, base).contiguous();
    const ag::Tensor vc = v.contiguous();
    const double* qd = qr.data();
    const auto score = [&](const double* key) {
        double s = 0;
        for (int64_t i = 0; i < dh; ++i) s += qd[i] * key[i];
        return s / std::sqrt(static_cast<double>(dh));
    };
    // the keys in the window: its own, and every cached position after p - W
    std::vector<double> scores{score(kr.data())};
    std::vector<const double*> rows{vc.data()};
    for (int64_t s = 0; s < window; ++s) {
        const int64_t at = positions[static_cast<size_t>(s)];
        if (at < 0 || at <= position - window) continue;
        scores.push_back(score(keys.data() + s * dh));
        rows.push_back(values.data() + s * dh);
    }
    const double top = *std::max_element(scores.begin(), scores.end());
    double total = 0;
    for (double& s : scores) total += (s = std::exp(s - top));
    std::vector<double> out(static_cast<size_t>(dh), 0.0);
    for (size_t j = 0; j < rows.size(); ++j)
        for (int64_t i = 0; i < dh; ++i) out[static_cast<size_t>(i)] += scores[j] / total * rows[j][i];
    // then store the new token over p - W
    const int64_t slot = slot_of(position);
    std::copy_n(kr.data(), dh, keys.data() + slot * dh);
    std::copy_n(vc.data(), dh, values.data() + slot * dh);
    positions[static_cast<size_t>(slot)] = position;
    return ag::Tensor::from({dh}, out);
}

}  // namespace ex16
