#pragma once
// Exercise 2 · RoPE's range of speeds (lecture §4.5, exercise 2). The
// statement is in ex02_rope_frequencies.cpp.
#include <cstdint>
#include <vector>

namespace ex02 {

// θ_i = base^(-2(i-1)/d) for i = 1 … d/2 (radians per position of pair i).
std::vector<double> rope_thetas(int64_t d, double base);

// How many positions pair i needs for one full turn: 2π / θ.
double period(double theta);

}  // namespace ex02
