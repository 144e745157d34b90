#pragma once
// Exercise 9 · RMSNorm vs LayerNorm (lecture §3.2, exercise 9). The
// statement is in ex09_norms.cpp.
#include <vector>

namespace ex09 {

// Without scale or bias, over the whole vector:
// RMSNorm: x / sqrt(mean(x²) + eps).
std::vector<double> rms_norm(const std::vector<double>& x, double eps);
// LayerNorm: (x - mean(x)) / sqrt(var(x) + eps), var the biased variance.
std::vector<double> layer_norm(const std::vector<double>& x, double eps);

}  // namespace ex09
