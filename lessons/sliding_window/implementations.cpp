#include "lessons/sliding_window/implementations.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "autograd/engine.h"
#include "autograd/generator.h"
#include "autograd/ops.h"

namespace lessons::sliding_window {
namespace {

constexpr double kMinusInfinity = -std::numeric_limits<double>::infinity();

void check_inputs(const char* what, const ag::Tensor& q, const ag::Tensor& k, const ag::Tensor& v, int64_t window) {
    if (q.dim() != 2 || q.shape() != k.shape() || q.shape() != v.shape() || window < 1)
        throw std::invalid_argument(fmt::format("{}: q {}, k {}, v {} must be one [T, d] shape and W = {} >= 1", what,
                                                ag::shape_str(q.shape()), ag::shape_str(k.shape()),
                                                ag::shape_str(v.shape()), window));
}

// softmax over the visible keys: scores where `hidden` is 1 become -inf,
// which softmax turns into weight 0 (every row sees at least its diagonal).
ag::Tensor masked_softmax_times_v(const ag::Tensor& scores, const ag::Tensor& hidden, const ag::Tensor& v) {
    return ag::matmul(ag::softmax(ag::masked_fill(scores, hidden, kMinusInfinity)), v);
}

// x [T, d] with zero rows added at the end to reach `rows` rows.
ag::Tensor pad_rows(const ag::Tensor& x, int64_t rows) {
    if (rows == x.size(0)) return x;
    return ag::cat({x, ag::Tensor::zeros({rows - x.size(0), x.size(1)})}, 0);
}

}  // namespace

bool visible(int64_t t, int64_t j, int64_t window) { return t - window < j && j <= t; }

EngineMask engine_mask(int64_t slides_w, int64_t T) {
    EngineMask result;
    result.slides_w = slides_w;
    result.window = slides_w / 2 + 1;
    ag::Generator gen(0);
    const ag::Tensor q = ag::Tensor::randn({1, T, 1, 4}, gen), k = ag::Tensor::randn({1, T, 1, 4}, gen);
    ag::Tensor weights;
    ag::NoGradGuard no_grad;
    ag::causal_attention(q, k, k, result.window, &weights);  // weights [1, 1, T, T]
    for (int64_t t = 0; t < T; ++t) {
        std::vector<double> row;
        int64_t count = 0;
        for (int64_t j = 0; j < T; ++j) {
            const bool seen = weights.at({0, 0, t, j}) > 0.0;
            row.push_back(seen ? 1 : 0);
            result.mismatches += seen != visible(t, j, result.window);
            count += seen;
        }
        result.mask.push_back(std::move(row));
        result.visible_keys.push_back(count);
        result.most_visible = std::max(result.most_visible, count);
    }
    return result;
}

ag::Tensor naive_window_attention(const ag::Tensor& q, const ag::Tensor& k, const ag::Tensor& v, int64_t window) {
    check_inputs("naive_window_attention", q, k, v, window);
    const int64_t T = q.size(0);
    const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(1)));
    ag::Tensor hidden = ag::Tensor::zeros({T, T});
    double* h = hidden.data();
    for (int64_t t = 0; t < T; ++t)
        for (int64_t j = 0; j < T; ++j) h[t * T + j] = visible(t, j, window) ? 0.0 : 1.0;
    return masked_softmax_times_v(ag::matmul(q, k.t()) * scale, hidden, v);
}

ag::Tensor loop_window_attention(const ag::Tensor& q, const ag::Tensor& k, const ag::Tensor& v, int64_t window) {
    check_inputs("loop_window_attention", q, k, v, window);
    const int64_t T = q.size(0);
    const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(1)));
    std::vector<ag::Tensor> rows;
    for (int64_t t = 0; t < T; ++t) {
        const int64_t first = std::max<int64_t>(0, t - window + 1), n = t - first + 1;
        const ag::Tensor scores = ag::matmul(q.narrow(0, t, 1), k.narrow(0, first, n).t()) * scale;  // [1, n]
        rows.push_back(ag::matmul(ag::softmax(scores), v.narrow(0, first, n)));
    }
    return ag::cat(rows, 0);
}

ag::Tensor chunked_window_attention(const ag::Tensor& q, const ag::Tensor& k, const ag::Tensor& v, int64_t window) {
    check_inputs("chunked_window_attention", q, k, v, window);
    const int64_t T = q.size(0), d = q.size(1), W = window;
    const int64_t chunks = (T + W - 1) / W, padded = chunks * W;
    const double scale = 1.0 / std::sqrt(static_cast<double>(d));

    // Chunk b holds positions bW … bW+W-1. Its keys (and values) are chunks
    // b-1 and b side by side: rows (b-1)W … bW+W-1 of k with W zero rows put
    // in front (chunk -1, positions -W … -1, never visible). Both halves are
    // views of one padded matrix; the [chunks, 2W, d] blocks hold each key
    // twice: O(T·d) memory, and the scores O(T·2W), never O(T²).
    const auto pairs_of_chunks = [&](const ag::Tensor& x) {
        const ag::Tensor shifted = ag::cat({ag::Tensor::zeros({W, d}), pad_rows(x, padded)}, 0);  // [padded + W, d]
        return ag::cat({shifted.narrow(0, 0, padded).reshape({chunks, W, d}),
                        shifted.narrow(0, W, padded).reshape({chunks, W, d})},
                       1);  // [chunks, 2W, d]
    };
    const ag::Tensor q_chunks = pad_rows(q, padded).reshape({chunks, W, d});
    const ag::Tensor k_pairs = pairs_of_chunks(k), v_pairs = pairs_of_chunks(v);
    const ag::Tensor scores = ag::matmul(q_chunks, k_pairs.transpose(1, 2)) * scale;  // [chunks, W, 2W]

    // Query i of chunk b is position bW + i; key c of its block is (b-1)W + c.
    ag::Tensor hidden = ag::Tensor::zeros({chunks, W, 2 * W});
    double* h = hidden.data();
    for (int64_t b = 0; b < chunks; ++b)
        for (int64_t i = 0; i < W; ++i)
            for (int64_t c = 0; c < 2 * W; ++c) {
                const int64_t t = b * W + i, j = (b - 1) * W + c;
                h[(b * W + i) * 2 * W + c] = j >= 0 && visible(t, j, W) ? 0.0 : 1.0;
            }
    return masked_softmax_times_v(scores, hidden, v_pairs).reshape({padded, d}).narrow(0, 0, T);
}

int64_t naive_scores(int64_t T, int64_t /*window*/) { return T * T; }

int64_t loop_scores(int64_t T, int64_t window) {
    // Σ_t min(t + 1, W): 1 + 2 + … + W over the first W queries, W for each later one.
    if (T <= window) return T * (T + 1) / 2;
    return T * window - window * (window - 1) / 2;
}

int64_t chunked_scores(int64_t T, int64_t window) {
    const int64_t chunks = (T + window - 1) / window;
    return chunks * window * 2 * window;
}

}  // namespace lessons::sliding_window
