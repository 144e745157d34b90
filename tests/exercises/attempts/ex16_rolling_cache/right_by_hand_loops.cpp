// Attempt (right): RoPE written by hand (pairing Half: dim i with i + d/2, angle p · base^(-2i/d)) and
// the attention as plain loops over the filled slots with a running max (online softmax), straight
// into a new tensor: decoding needs no graph
#include "exercises/ex16_rolling_cache.h"

#include <cmath>
#include <vector>

#include "autograd/autograd.h"

namespace ex16 {

RollingCache::RollingCache(int64_t W, int64_t head_dim, double rope_base)
    : window(W), base(rope_base), positions(static_cast<size_t>(W - 1), -1) {
    keys = ag::Tensor::zeros({W - 1, head_dim});
    values = ag::Tensor::zeros({W - 1, head_dim});
}

int64_t RollingCache::slot_of(int64_t position) const { return position % (window - 1); }

namespace {

std::vector<double> rotated(const ag::Tensor& x, int64_t p, double base) {
    std::vector<double> in = x.contiguous().to_vector(), out(in.size());
    const size_t half = in.size() / 2;
    for (size_t i = 0; i < half; ++i) {
        const double theta = std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(in.size()));
        const double a = static_cast<double>(p) * theta, c = std::cos(a), s = std::sin(a);
        out[i] = in[i] * c - in[i + half] * s;
        out[i + half] = in[i] * s + in[i + half] * c;
    }
    return out;
}

}  // namespace

ag::Tensor RollingCache::step(const ag::Tensor& q, const ag::Tensor& k, const ag::Tensor& v, int64_t position) {
    const int64_t dh = keys.size(1);
    const size_t n = static_cast<size_t>(dh);
    const std::vector<double> qr = rotated(q, position, base), kr = rotated(k, position, base);
    const std::vector<double> vv = v.contiguous().to_vector();
    const double inv = 1.0 / std::sqrt(static_cast<double>(dh));
    // online softmax: the new token first, then each filled slot
    std::vector<double> acc(vv);
    double m = 0.0, z = 1.0;
    for (size_t i = 0; i < n; ++i) m += qr[i] * kr[i] * inv;
    for (size_t s = 0; s < positions.size(); ++s) {
        if (positions[s] < 0) continue;
        const double* ks = keys.data() + s * n;
        const double* vs = values.data() + s * n;
        double score = 0.0;
        for (size_t i = 0; i < n; ++i) score += qr[i] * ks[i] * inv;
        if (score > m) {
            const double shrink = std::exp(m - score);
            for (double& a : acc) a *= shrink;
            z *= shrink;
            m = score;
        }
        const double w = std::exp(score - m);
        z += w;
        for (size_t i = 0; i < n; ++i) acc[i] += w * vs[i];
    }
    for (double& a : acc) a /= z;
    const size_t slot = static_cast<size_t>(slot_of(position));
    {
        ag::NoGradGuard guard;
        for (size_t i = 0; i < n; ++i) {
            keys.data()[slot * n + i] = kr[i];
            values.data()[slot * n + i] = vv[i];
        }
    }
    positions[slot] = position;
    return ag::Tensor::from({dh}, acc);
}

}  // namespace ex16
