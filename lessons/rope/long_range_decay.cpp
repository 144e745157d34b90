#include "lessons/rope/long_range_decay.h"

#include <algorithm>
#include <cmath>

#include "lessons/rope/rotation.h"

namespace lessons::rope {
namespace {

double at(const std::vector<double>& s, int64_t delta) { return s[static_cast<size_t>(delta)]; }

std::vector<Decade> decades(const std::vector<double>& s) {
    const auto max_delta = static_cast<int64_t>(s.size()) - 1;
    std::vector<Decade> bands;
    for (int64_t lo = 1; lo * 10 - 1 <= max_delta; lo *= 10) {
        Decade band{lo, lo * 10 - 1};
        double total = 0.0;
        for (int64_t delta = lo; delta < lo * 10; ++delta) {
            band.max_abs = std::max(band.max_abs, std::fabs(at(s, delta)));
            total += std::fabs(at(s, delta));
        }
        band.mean_abs = total / static_cast<double>(lo * 9);
        bands.push_back(band);
    }
    return bands;
}

}  // namespace

std::vector<double> similarity(int64_t max_delta, int64_t d, double base) {
    std::vector<double> u(static_cast<size_t>(d), 0.0);
    for (int64_t i = 0; i < d; i += 2) u[static_cast<size_t>(i)] = 1.0 / std::sqrt(static_cast<double>(d) / 2.0);
    const ag::Tensor unit = ag::Tensor::from({1, d}, u);
    const ag::Tensor copies = ag::matmul(ag::Tensor::ones({max_delta + 1, 1}), unit);
    const ag::Tensor turned = rotate_engine(copies, first_positions(max_delta + 1), ag::RopePairing::Interleaved, base);
    return ag::matmul(turned, unit.t()).to_vector();  // row Δ: (R_Δ u)ᵀ (R_0 u), R_0 = I
}

FrequencyComparison compare_frequencies(int64_t max_delta, int64_t search, int64_t d) {
    FrequencyComparison c;
    c.one = similarity(max_delta, d, 1.0);  // base 1: θ_i = 1 for every pair
    c.geometric = similarity(max_delta, d, 10000.0);
    c.alias = 1;
    for (int64_t delta = 2; delta <= search; ++delta)
        if (at(c.one, delta) > at(c.one, c.alias)) c.alias = delta;
    c.one_decades = decades(c.one);
    c.rope_decades = decades(c.geometric);
    c.rope_decays = true;
    for (size_t b = 1; b < c.rope_decades.size(); ++b)
        c.rope_decays = c.rope_decays && c.rope_decades[b].mean_abs < c.rope_decades[b - 1].mean_abs;
    return c;
}

}  // namespace lessons::rope
