#pragma once
// Shared helpers for the engine tests: compare a tensor with expected
// numbers and report the case, the expected and the actual values.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include "catch.h"

#include "autograd/autograd.h"
#include "tests/close.h"

namespace test {

inline std::string values_str(const std::vector<double>& v, std::size_t limit = 24) {
    std::string s = "{";
    for (std::size_t i = 0; i < v.size() && i < limit; ++i) {
        s += (i ? ", " : "") + fmt::format("{:.17g}", v[i]);
    }
    if (v.size() > limit) s += fmt::format(", ... ({} values)", v.size());
    return s + "}";
}

// Empty when `t` has shape `shape` and values close to `expected`
// (row-major; the rule of tests/close.h); otherwise says what differs.
inline std::string compare(const ag::Tensor& t, const ag::Shape& shape, const std::vector<double>& expected,
                           double tol = 1e-12) {
    if (!t.defined()) return "tensor is undefined";
    if (t.shape() != shape) {
        return fmt::format("shape: expected {}, actual {}", ag::shape_str(shape), ag::shape_str(t.shape()));
    }
    const std::vector<double> actual = t.to_vector();
    if (actual.size() != expected.size()) {
        return fmt::format("to_vector() has {} values, expected {}", actual.size(), expected.size());
    }
    std::string bad;
    int shown = 0;
    for (std::size_t i = 0; i < actual.size(); ++i) {
        const double e = expected[i], a = actual[i];
        if (!close(a, e, tol) && shown < 6) {
            bad += fmt::format("\n  element {} (row-major): expected {:.17g}, actual {:.17g}", i, e, a);
            ++shown;
        }
    }
    if (bad.empty()) return {};
    return fmt::format("shape {}\n  expected {}\n  actual   {}{}", ag::shape_str(shape), values_str(expected),
                       values_str(actual), bad);
}

// Positions as {0, 3, 11}, for a case's name.
inline std::string positions_str(const std::vector<int64_t>& p) { return fmt::format("{{{}}}", fmt::join(p, ", ")); }

inline std::vector<double> range_values(int64_t n, double start = 0.0) {
    std::vector<double> v(static_cast<std::size_t>(n));
    for (int64_t i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = start + static_cast<double>(i);
    return v;
}

// Random tensor, uniform in [low, high), requiring grad by default.
inline ag::Tensor rand_t(const ag::Shape& shape, ag::Generator& gen, double low = -1.0, double high = 1.0,
                         bool requires_grad = true) {
    const int64_t n = ag::numel_of(shape);
    std::vector<double> v(static_cast<std::size_t>(n));
    for (auto& x : v) x = gen.uniform(low, high);
    return ag::Tensor::from(shape, v, requires_grad);
}

// Random values with |x| in [0.2, 1.2), random sign: away from kinks at 0.
inline ag::Tensor rand_away_from_zero(const ag::Shape& shape, ag::Generator& gen, bool requires_grad = true) {
    const int64_t n = ag::numel_of(shape);
    std::vector<double> v(static_cast<std::size_t>(n));
    for (auto& x : v) x = (gen.uniform() < 0.5 ? -1.0 : 1.0) * (0.2 + gen.uniform());
    return ag::Tensor::from(shape, v, requires_grad);
}

// Whole numbers in [0, n) stored as double (ids, targets).
inline ag::Tensor rand_ids(const ag::Shape& shape, ag::Generator& gen, int64_t n) {
    const int64_t count = ag::numel_of(shape);
    std::vector<double> v(static_cast<std::size_t>(count));
    for (auto& x : v) x = static_cast<double>(gen.randint(n));
    return ag::Tensor::from(shape, v);
}

}  // namespace test

// CHECK_TENSOR(t, shape, {values...}[, tol]): shape and values, with a
// readable report of every mismatch.
#define CHECK_TENSOR(t, ...)                                           \
    do {                                                               \
        const std::string mismatch_ = test::compare((t), __VA_ARGS__); \
        INFO(#t << ": " << mismatch_);                                 \
        CHECK(mismatch_.empty());                                      \
    } while (0)

// expr throws std::invalid_argument whose message matches `matcher`.
#define CHECK_INVALID(expr, matcher)                  \
    do {                                              \
        CHECK_THROWS_AS(expr, std::invalid_argument); \
        CHECK_THROWS_WITH(expr, matcher);             \
    } while (0)

namespace test {

// actual ≈ expected elementwise (tol · max(1, |expected|)), naming the case
// and the largest difference.
inline void check_close(const std::string& what, const ag::Tensor& actual, const ag::Tensor& expected, double tol) {
    INFO(what << " (tolerance " << tol << ", max |diff| "
              << (actual.shape() == expected.shape() ? ag::max_abs_diff(actual, expected) : -1.0) << ")");
    CHECK_TENSOR(actual, expected.shape(), expected.to_vector(), tol);
}

}  // namespace test
