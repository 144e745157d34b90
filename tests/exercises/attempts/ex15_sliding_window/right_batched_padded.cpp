// Attempt (right): the mask from engine ops on t - j (broadcast aranges); all chunks in one batched
// product, as lesson 04 does: q padded at the end to nb·W rows, k and v padded with W rows of zeros in
// front (and at the end), so chunk b's keys are rows bW … bW+2W-1 of the padded k; one [nb, W, 2W]
// mask hides the padding and what the window hides
#include "exercises/ex15_sliding_window.h"

#include <cmath>
#include <limits>
#include <vector>

#include "autograd/ops.h"

namespace ex15 {

ag::Tensor window_mask(int64_t T, int64_t window) {
    const ag::Tensor t = ag::reshape(ag::Tensor::arange(static_cast<double>(T)), {T, 1});
    const ag::Tensor j = ag::reshape(ag::Tensor::arange(static_cast<double>(T)), {1, T});
    // t - W < j <= t  <=>  0 <= t - j < W; for a whole number n, relu(n + 1) - relu(n) is [n >= 0]
    const ag::Tensor diff = t - j;  // [T, T] by broadcasting
    const auto at_least = [&](double c) { return ag::relu(diff - c + 1.0) - ag::relu(diff - c); };
    return at_least(0.0) - at_least(static_cast<double>(window));
}

ag::Tensor chunked_attention(const ag::Tensor& q, const ag::Tensor& k, const ag::Tensor& v, int64_t window) {
    const int64_t T = q.size(0), d = q.size(1), W = window;
    const int64_t nb = (T + W - 1) / W, pad = nb * W - T;
    std::vector<ag::Tensor> qparts{q}, kparts{ag::Tensor::zeros({W, d}), k}, vparts{ag::Tensor::zeros({W, d}), v};
    if (pad > 0) {
        qparts.push_back(ag::Tensor::zeros({pad, d}));
        kparts.push_back(ag::Tensor::zeros({pad, d}));
        vparts.push_back(ag::Tensor::zeros({pad, d}));
    }
    const ag::Tensor qp = ag::cat(qparts, 0), kp = ag::cat(kparts, 0), vp = ag::cat(vparts, 0);
    // chunk b's keys: padded rows bW … bW+2W-1 = the previous and the own chunk
    std::vector<ag::Tensor> kb, vb;
    for (int64_t b = 0; b < nb; ++b) {
        kb.push_back(ag::narrow(kp, 0, b * W, 2 * W));
        vb.push_back(ag::narrow(vp, 0, b * W, 2 * W));
    }
    const ag::Tensor K = ag::stack(kb, 0), V = ag::stack(vb, 0);  // [nb, 2W, d]
    const ag::Tensor Q = ag::reshape(qp, {nb, W, d});             // [nb, W, d]
    const ag::Tensor s = ag::matmul(Q, ag::transpose(K, 1, 2)) / std::sqrt(static_cast<double>(d));
    // query i of a chunk (position bW + i) and key jj (position bW - W + jj): visible iff
    // i < jj <= i + W; padding in front (b = 0, jj < W) is hidden too, and so are padded keys at
    // the end, which lie after every real query of their chunk
    std::vector<double> hidden(static_cast<size_t>(nb * W * 2 * W), 0.0);
    for (int64_t b = 0; b < nb; ++b)
        for (int64_t i = 0; i < W; ++i)
            for (int64_t jj = 0; jj < 2 * W; ++jj) {
                const int64_t key = b * W - W + jj;
                const bool visible = i < jj && jj <= i + W && key >= 0;
                if (!visible) hidden[static_cast<size_t>((b * W + i) * 2 * W + jj)] = 1.0;
            }
    const ag::Tensor p = ag::softmax(
        ag::masked_fill(s, ag::Tensor::from({nb, W, 2 * W}, hidden), -std::numeric_limits<double>::infinity()));
    return ag::narrow(ag::reshape(ag::matmul(p, V), {nb * W, d}), 0, 0, T);
}

}  // namespace ex15
