#pragma once
// What every exercise's grading tests share: seeded random inputs and
// checks whose failure message says what was expected.
#include <cmath>
#include <cstdint>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

namespace grading {

// Seeded random numbers: the same inputs on every run.
struct Random {
    std::mt19937_64 engine;
    explicit Random(uint64_t seed) : engine(seed) {}
    double uniform(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(engine); }
    int64_t integer(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(engine); }
    double normal() { return std::normal_distribution<double>(0.0, 1.0)(engine); }
};

// |a - b| <= tol·max(1, |b|): a relative check for large values, an
// absolute one near zero.
inline bool close(double a, double b, double tol = 1e-12) {
    return std::fabs(a - b) <= tol * std::max(1.0, std::fabs(b));
}

template <class Container>
std::string str(const Container& values) {
    std::ostringstream out;
    out.precision(10);
    out << "[";
    for (size_t i = 0; i < values.size(); ++i) out << (i ? ", " : "") << values[i];
    return out.str() + "]";
}

}  // namespace grading

// CHECK_CLOSE(actual, expected, tol): grading::close, and on failure the
// message shows both values.
#define CHECK_CLOSE(actual, expected, tol)                                                   \
    do {                                                                                     \
        const double grading_actual_ = (actual), grading_expected_ = (expected);             \
        INFO("expected " #actual " = " << grading_expected_ << ", got " << grading_actual_); \
        CHECK(grading::close(grading_actual_, grading_expected_, tol));                      \
    } while (false)
