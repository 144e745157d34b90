// Exercise 16 · a rolling-buffer KV cache for decoding with RoPE: reference
// solution (lecture §6.4, §4.7).
#include "exercises/ex16_rolling_cache.h"

#include <algorithm>
#include <cmath>

#include "autograd/autograd.h"

namespace ex16 {

RollingCache::RollingCache(int64_t W, int64_t head_dim, double rope_base)
    : window(W),
      base(rope_base),
      keys(ag::Tensor::zeros({W - 1, head_dim})),
      values(ag::Tensor::zeros({W - 1, head_dim})),
      positions(static_cast<size_t>(W - 1), -1) {}

// §6.4 W-1 slots; position p overwrites p - (W-1), the one the next query
// (at p+1, seeing back to p+1-W+1 = p-W+2) no longer needs.
int64_t RollingCache::slot_of(int64_t position) const { return position % (window - 1); }

ag::Tensor RollingCache::step(const ag::Tensor& q, const ag::Tensor& k, const ag::Tensor& v, int64_t position) {
    ag::NoGradGuard no_grad;  // decoding: the buffer is written in place
    const int64_t dh = q.numel();
    // §4.7 q and k turned by position·θ_i, the token's ABSOLUTE position.
    // ag::rope wants [..., T, H, dh]: one time step of one head.
    const auto rotated = [&](const ag::Tensor& x) {
        return ag::rope(x.reshape({1, 1, dh}), {position}, base).reshape({1, dh});
    };
    const ag::Tensor q_rot = rotated(q), k_rot = rotated(k);

    // The keys the query sees: its own, and every filled slot. Decoding in
    // order, the filled slots hold exactly p-W+1 … p-1 (the buffer
    // dropped everything older), all inside the window; an empty slot
    // (position -1) holds no token and must not be seen.
    std::vector<ag::Tensor> seen_k{k_rot}, seen_v{v.reshape({1, dh})};
    for (int64_t s = 0; s < window - 1; ++s)
        if (positions[static_cast<size_t>(s)] >= 0) {
            seen_k.push_back(keys.narrow(0, s, 1));
            seen_v.push_back(values.narrow(0, s, 1));
        }
    // softmax(q̃ K̃ᵀ / √dh) V, [1, n] × [n, dh]
    const ag::Tensor scores = ag::matmul(q_rot, ag::cat(seen_k, 0).t()) / std::sqrt(static_cast<double>(dh));
    const ag::Tensor out = ag::matmul(ag::softmax(scores), ag::cat(seen_v, 0)).reshape({dh});

    // Store the ROTATED key (it never needs rotating again) and the value
    // in slot p mod (W-1), over the oldest entry.
    const int64_t slot = slot_of(position);
    const ag::Tensor k_store = k_rot.contiguous(), v_store = v.contiguous();
    std::copy_n(k_store.data(), dh, keys.data() + slot * dh);
    std::copy_n(v_store.data(), dh, values.data() + slot * dh);
    positions[static_cast<size_t>(slot)] = position;
    return out;
}

}  // namespace ex16
