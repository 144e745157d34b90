#pragma once
// Sums and a maximum along a row, vectorised but deterministic.
//
// A plain `for (i) s += x[i]` is one chain of dependent additions: the CPU
// waits for each before starting the next, and the compiler may not reorder
// it (that would change the rounding). These keep 8 partial sums, lane l
// taking elements l, l+8, l+16, …, and add the lanes in a fixed tree at the
// end: one AVX-512 vector of independent sums. The order is fixed by this
// code, never by the thread count, so results stay the same for any number
// of threads.
#include <algorithm>
#include <cstdint>
#include <limits>

namespace ag::kernels {

constexpr int kLanes = 8;

inline double combine_lanes(const double* lane) {
    return ((lane[0] + lane[4]) + (lane[1] + lane[5])) + ((lane[2] + lane[6]) + (lane[3] + lane[7]));
}

// Σ_i x[i]
inline double sum(const double* x, int64_t n) {
    double lane[kLanes] = {};
    int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes)
        for (int l = 0; l < kLanes; ++l) lane[l] += x[i + l];
    double s = combine_lanes(lane);
    for (; i < n; ++i) s += x[i];
    return s;
}

// Σ_i x[i] y[i]
inline double dot(const double* x, const double* y, int64_t n) {
    double lane[kLanes] = {};
    int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes)
        for (int l = 0; l < kLanes; ++l) lane[l] += x[i + l] * y[i + l];
    double s = combine_lanes(lane);
    for (; i < n; ++i) s += x[i] * y[i];
    return s;
}

// Σ_i (x[i] - c)²
inline double sum_sq_dev(const double* x, double c, int64_t n) {
    double lane[kLanes] = {};
    int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes)
        for (int l = 0; l < kLanes; ++l) lane[l] += (x[i + l] - c) * (x[i + l] - c);
    double s = combine_lanes(lane);
    for (; i < n; ++i) s += (x[i] - c) * (x[i] - c);
    return s;
}

// max_i x[i] (-inf for n = 0), NaNs skipped as std::max skips them when
// they come second. A maximum is exact, so lanes give the same number as
// one chain of comparisons (up to the sign of a zero maximum), without
// waiting on each comparison in turn.
inline double max(const double* x, int64_t n) {
    constexpr double kLowest = -std::numeric_limits<double>::infinity();
    double lane[kLanes] = {kLowest, kLowest, kLowest, kLowest, kLowest, kLowest, kLowest, kLowest};
    int64_t i = 0;
    for (; i + kLanes <= n; i += kLanes)
        for (int l = 0; l < kLanes; ++l) lane[l] = std::max(lane[l], x[i + l]);
    double m = kLowest;
    for (int l = 0; l < kLanes; ++l) m = std::max(m, lane[l]);
    for (; i < n; ++i) m = std::max(m, x[i]);
    return m;
}

}  // namespace ag::kernels
