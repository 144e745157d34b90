#include "lessons/rope/rotation.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "autograd/generator.h"

namespace lessons::rope {
namespace {

void check_rows(const char* what, const ag::Tensor& x, const std::vector<int64_t>& positions) {
    if (x.dim() != 2 || x.size(1) % 2 != 0 || x.size(0) != static_cast<int64_t>(positions.size()))
        throw std::invalid_argument(fmt::format("{}: x {} must be [N, d] with d even and N = {} positions", what,
                                                ag::shape_str(x.shape()), positions.size()));
}

// An [N, d] table whose row n is f(angle) of the angles m θ, m = positions[n],
// laid out per pair as `order` says: each angle twice in a row (interleaved:
// θ_1, θ_1, θ_2, θ_2, …) or the d/2 angles twice over (half: θ_1 … θ_{d/2},
// θ_1 … θ_{d/2}).
enum class Layout { Interleaved, Half };
ag::Tensor angle_table(const std::vector<int64_t>& positions, int64_t d, double base, Layout layout,
                       double (*f)(double)) {
    const std::vector<double> theta = frequencies(d, base);
    const int64_t half = d / 2;
    std::vector<double> values;
    values.reserve(positions.size() * static_cast<size_t>(d));
    for (const int64_t m : positions)
        for (int64_t c = 0; c < d; ++c) {
            const int64_t i = layout == Layout::Interleaved ? c / 2 : c % half;
            values.push_back(f(static_cast<double>(m) * theta[static_cast<size_t>(i)]));
        }
    return ag::Tensor::from({static_cast<int64_t>(positions.size()), d}, std::move(values));
}

double cosine(double a) { return std::cos(a); }
double sine(double a) { return std::sin(a); }

// Column c of the result is column source[c] of x.
ag::Tensor columns(const ag::Tensor& x, const std::vector<int64_t>& source) {
    const auto n = static_cast<int64_t>(source.size());
    return ag::index_select(x, 1, ag::Tensor::from({n}, std::vector<double>(source.begin(), source.end())));
}

}  // namespace

std::vector<double> frequencies(int64_t d, double base) {
    std::vector<double> theta;
    for (int64_t i = 0; i < d / 2; ++i)  // the same expression as the engine's ag::rope
        theta.push_back(std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(d)));
    return theta;
}

ag::Tensor rotation_matrix(int64_t m, int64_t d, double base) {
    const std::vector<double> theta = frequencies(d, base);
    ag::Tensor R = ag::Tensor::zeros({d, d});
    double* r = R.data();
    for (int64_t i = 0; i < d / 2; ++i) {
        const double angle = static_cast<double>(m) * theta[static_cast<size_t>(i)];
        const int64_t a = 2 * i, b = 2 * i + 1;
        r[a * d + a] = std::cos(angle);
        r[a * d + b] = -std::sin(angle);
        r[b * d + a] = std::sin(angle);
        r[b * d + b] = std::cos(angle);
    }
    return R;
}

ag::Tensor rotate_full_matrix(const ag::Tensor& x, const std::vector<int64_t>& positions, double base) {
    check_rows("rotate_full_matrix", x, positions);
    const int64_t d = x.size(1);
    std::vector<ag::Tensor> rows;
    for (size_t n = 0; n < positions.size(); ++n) {
        // a row vector times Rᵀ is (R x)ᵀ
        const ag::Tensor row = x.narrow(0, static_cast<int64_t>(n), 1);
        rows.push_back(ag::matmul(row, rotation_matrix(positions[n], d, base).t()));
    }
    return ag::cat(rows, 0);
}

ag::Tensor rotate_elementwise(const ag::Tensor& x, const std::vector<int64_t>& positions, double base) {
    check_rows("rotate_elementwise", x, positions);
    const int64_t d = x.size(1);
    // (-x_2, x_1, -x_4, x_3, …): each pair swapped, its first entry negated
    std::vector<int64_t> swapped;
    for (int64_t c = 0; c < d; ++c) swapped.push_back(c % 2 == 0 ? c + 1 : c - 1);
    std::vector<double> sign;
    for (int64_t c = 0; c < d; ++c) sign.push_back(c % 2 == 0 ? -1.0 : 1.0);
    const ag::Tensor x_swapped = columns(x, swapped) * ag::Tensor::from({d}, sign);
    return x * angle_table(positions, d, base, Layout::Interleaved, cosine) +
           x_swapped * angle_table(positions, d, base, Layout::Interleaved, sine);
}

ag::Tensor rotate_matrix_form(const ag::Tensor& y, const std::vector<int64_t>& positions, double base) {
    check_rows("rotate_matrix_form", y, positions);
    const int64_t d = y.size(1), half = d / 2;
    const ag::Tensor rotated_half = ag::cat({-y.narrow(1, half, half), y.narrow(1, 0, half)}, 1);
    return y * angle_table(positions, d, base, Layout::Half, cosine) +
           rotated_half * angle_table(positions, d, base, Layout::Half, sine);
}

ag::Tensor rotate_engine(const ag::Tensor& x, const std::vector<int64_t>& positions, ag::RopePairing pairing,
                         double base) {
    check_rows("rotate_engine", x, positions);
    const int64_t n = x.size(0), d = x.size(1);
    // ag::rope wants [..., T, H, dh]: here T = N rows and one head
    return ag::rope(x.reshape({n, 1, d}), positions, base, pairing).reshape({n, d});
}

ag::Tensor to_half_order(const ag::Tensor& x) {
    const int64_t d = x.size(1);
    std::vector<int64_t> source;  // new column i reads old 2i, new i + d/2 reads old 2i+1
    for (int64_t c = 0; c < d; ++c) source.push_back(c < d / 2 ? 2 * c : 2 * (c - d / 2) + 1);
    return columns(x, source);
}

ag::Tensor from_half_order(const ag::Tensor& x) {
    const int64_t d = x.size(1);
    std::vector<int64_t> source;  // old column 2i is new i, old 2i+1 is new i + d/2
    for (int64_t c = 0; c < d; ++c) source.push_back(c % 2 == 0 ? c / 2 : c / 2 + d / 2);
    return columns(x, source);
}

std::vector<int64_t> first_positions(int64_t n) {
    std::vector<int64_t> positions;
    for (int64_t m = 0; m < n; ++m) positions.push_back(m);
    return positions;
}

std::vector<FormErrors> forms_against_full_matrix(int64_t n, int64_t d, int seeds) {
    const std::vector<int64_t> positions = first_positions(n);
    std::vector<FormErrors> per_seed;
    for (int seed = 0; seed < seeds; ++seed) {
        ag::Generator gen(static_cast<uint64_t>(seed));
        const ag::Tensor x = ag::Tensor::randn({n, d}, gen);
        const ag::Tensor full = rotate_full_matrix(x, positions);
        const ag::Tensor x_half = to_half_order(x);
        FormErrors e;
        e.elementwise = ag::max_abs_diff(rotate_elementwise(x, positions), full);
        e.engine_interleaved = ag::max_abs_diff(rotate_engine(x, positions, ag::RopePairing::Interleaved), full);
        e.matrix_form = ag::max_abs_diff(from_half_order(rotate_matrix_form(x_half, positions)), full);
        e.engine_half =
            ag::max_abs_diff(from_half_order(rotate_engine(x_half, positions, ag::RopePairing::Half)), full);
        e.unpermuted = ag::max_abs_diff(rotate_matrix_form(x, positions), full);
        per_seed.push_back(e);
    }
    return per_seed;
}

double norm_change(int64_t n, int64_t d) {
    ag::Generator gen(0);
    const ag::Tensor x = ag::Tensor::randn({n, d}, gen);
    const auto norms = [](const ag::Tensor& v) { return ag::sqrt(ag::sum(v * v, {1})); };
    return ag::max_abs_diff(norms(rotate_engine(x, first_positions(n), ag::RopePairing::Interleaved)), norms(x));
}

}  // namespace lessons::rope
