// Attempt (wrong): "normalising" a vector as giving it unit length, so
// RMSNorm divides by the L2 norm sqrt(Σx² + eps) instead of the root of the
// MEAN square (the output is sqrt(n) times too small).
#include "exercises/ex09_norms.h"

#include <cmath>

#include "exercises/not_implemented.h"

namespace ex09 {

std::vector<double> rms_norm(const std::vector<double>& x, double eps) {
    double sum_sq = 0;
    for (double v : x) sum_sq += v * v;
    const double norm = std::sqrt(sum_sq + eps);
    std::vector<double> y(x.size());
    for (size_t i = 0; i < x.size(); ++i) y[i] = x[i] / norm;
    return y;
}

std::vector<double> layer_norm(const std::vector<double>& x, double eps) {
    const double n = static_cast<double>(x.size());
    double mu = 0;
    for (double v : x) mu += v / n;
    double var = 0;
    for (double v : x) var += (v - mu) * (v - mu) / n;
    std::vector<double> y(x.size());
    for (size_t i = 0; i < x.size(); ++i) y[i] = (x[i] - mu) / std::sqrt(var + eps);
    return y;
}

}  // namespace ex09
