#pragma once
// What every exercise's grading tests share: seeded random inputs and
// checks whose failure message says what was expected.
#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "catch.h"

#include "autograd/generator.h"
#include "tests/close.h"

namespace grading {

// Seeded random numbers: the same inputs on every run and with every
// standard library (the engine's ag::Generator, not std::*_distribution,
// whose numbers differ between libstdc++ and libc++).
struct Random {
    ag::Generator gen;
    explicit Random(uint64_t seed) : gen(seed) {}
    double uniform(double lo, double hi) { return gen.uniform(lo, hi); }
    int64_t integer(int64_t lo, int64_t hi) { return lo + gen.randint(hi - lo + 1); }  // lo … hi, both included
    double normal() { return gen.normal(); }
};

// actual within tol·max(1, |expected|) of expected: the tests' one rule
// (tests/close.h), relative for large values, absolute near zero.
inline bool close(double actual, double expected, double tol = 1e-12) { return test::close(actual, expected, tol); }

// Same length and every element close (the rule above).
template <class A, class B>
bool same_values(const A& actual, const B& expected, double tol) {
    if (actual.size() != expected.size()) return false;
    for (size_t i = 0; i < actual.size(); ++i)
        if (!close(actual[i], expected[i], tol)) return false;
    return true;
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
