#pragma once
// The one rule by which the tests compare a computed number with an
// expected one: within tol·max(1, |expected|), relative for large values and
// absolute near zero; NaN matches only NaN and an infinity only itself (a
// NaN where a number was expected never passes).
#include <algorithm>
#include <cmath>

namespace test {

inline bool close(double actual, double expected, double tol) {
    if (std::isnan(expected)) return std::isnan(actual);
    if (std::isinf(expected)) return actual == expected;
    return std::isfinite(actual) && std::fabs(actual - expected) <= tol * std::max(1.0, std::fabs(expected));
}

}  // namespace test
