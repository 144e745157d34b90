#pragma once
// §4.5 question 2, why each pair turns at its own speed. How alike two
// positions Δ apart look without any content: the score between a unit
// vector u = (1, 0, 1, 0, …)/√(d/2), equal weight on every pair, at position
// 0 and the same u at position Δ,
//   similarity(Δ) = (R_Δ u)ᵀ (R_0 u) = mean over pairs of cos(Δ θ_i).
// With one frequency θ for every pair it is cos(Δ θ), which comes back to 1
// every 2π/θ positions (aliasing); RoPE's geometric θ_i never line up again
// within the range, and the similarity shrinks with distance (long-range
// decay, RoFormer).
#include <cstdint>
#include <vector>

namespace lessons::rope {

// similarity(Δ) for Δ = 0 … max_delta, u of size d, θ_i = base^(-2(i-1)/d)
// (base 1: one frequency θ = 1).
std::vector<double> similarity(int64_t max_delta, int64_t d, double base);

// |similarity| over one decade of distance, Δ = first … last.
struct Decade {
    int64_t first = 0, last = 0;  // 1 … 9, 10 … 99, …
    double max_abs = 0;           // max |similarity(Δ)|
    double mean_abs = 0;          // mean |similarity(Δ)|
};

struct FrequencyComparison {
    std::vector<double> one;                        // similarity with one frequency θ = 1, Δ = 0 … max_delta
    std::vector<double> geometric;                  // with RoPE's θ_i = 10000^(-2(i-1)/d)
    int64_t alias = 0;                              // the most similar Δ in 1 … search with one frequency
    std::vector<Decade> one_decades, rope_decades;  // every whole decade within max_delta
    bool rope_decays = false;                       // RoPE's mean |similarity| falls from each decade to the next
};
FrequencyComparison compare_frequencies(int64_t max_delta, int64_t search, int64_t d);

}  // namespace lessons::rope
