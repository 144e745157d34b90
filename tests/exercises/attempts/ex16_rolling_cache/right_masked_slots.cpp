// Attempt (right): scores the new key and ALL W-1 slots in one product, hides the empty slots (position -1)
// with masked_fill(-inf) instead of leaving them out, and writes the buffer row through a pointer loop.
#include "exercises/ex16_rolling_cache.h"

#include <cmath>
#include <limits>

#include "autograd/autograd.h"
#include "exercises/not_implemented.h"

namespace ex16 {

RollingCache::RollingCache(int64_t W, int64_t head_dim, double rope_base) {
    window = W;
    base = rope_base;
    keys = ag::Tensor::zeros({W - 1, head_dim});
    values = ag::Tensor::zeros({W - 1, head_dim});
    positions = std::vector<int64_t>(static_cast<size_t>(W - 1), -1);
}

int64_t RollingCache::slot_of(int64_t position) const { return position % (window - 1); }

ag::Tensor RollingCache::step(const ag::Tensor& q, const ag::Tensor& k, const ag::Tensor& v, int64_t position) {
    ag::NoGradGuard off;
    const int64_t n = q.numel(), slots = window - 1;
    const std::vector<int64_t> at{position};
    const ag::Tensor q_rot = ag::rope(q.reshape({1, 1, n}), at, base).reshape({1, n});
    const ag::Tensor k_rot = ag::rope(k.reshape({1, 1, n}), at, base).reshape({1, n});

    // column 0: the new token; columns 1 … W-1: slots 0 … W-2
    const ag::Tensor K = ag::cat({k_rot, keys}, 0), V = ag::cat({v.reshape({1, n}), values}, 0);
    ag::Tensor empty = ag::Tensor::zeros({1, slots + 1});
    for (int64_t s = 0; s < slots; ++s) empty.data()[1 + s] = positions[static_cast<size_t>(s)] < 0 ? 1.0 : 0.0;
    const ag::Tensor scores = ag::matmul(q_rot, K.t()) * (1.0 / std::sqrt(static_cast<double>(n)));
    const ag::Tensor weights = ag::softmax(ag::masked_fill(scores, empty, -std::numeric_limits<double>::infinity()));
    const ag::Tensor out = ag::matmul(weights, V).reshape({n});

    const int64_t slot = slot_of(position);
    const ag::Tensor k_row = k_rot.contiguous(), v_row = v.contiguous();
    double* key_dst = keys.data() + slot * n;
    double* value_dst = values.data() + slot * n;
    for (int64_t i = 0; i < n; ++i) {
        key_dst[i] = k_row.data()[i];
        value_dst[i] = v_row.data()[i];
    }
    positions[static_cast<size_t>(slot)] = position;
    return out;
}

}  // namespace ex16
