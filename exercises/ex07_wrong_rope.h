#pragma once
// Exercise 7 · the slides' "wrong" RoPE (lecture §4.3, exercise 7). The
// statement is in ex07_wrong_rope.cpp.
#include <cstdint>
#include <vector>

namespace ex07 {

using Vec = std::vector<double>;

// R_{Θ,m} x as on the slides: dimensions 2i-1 and 2i (counted from 1, as
// the lecture does) form pair i = 1 … d/2, turned by the angle m·θ_i,
// θ_i = base^(-2(i-1)/d) (d = x.size(), even).
Vec rotate(const Vec& x, int64_t m, double base);

// RoPE's score: (R_t q) · (R_j k).
double rope_score(const Vec& q, int64_t t, const Vec& k, int64_t j, double base);

// The version the slides mark "wrong": both turned by t - j,
// (R_{t-j} q) · (R_{t-j} k).
double wrong_score(const Vec& q, int64_t t, const Vec& k, int64_t j, double base);

}  // namespace ex07
