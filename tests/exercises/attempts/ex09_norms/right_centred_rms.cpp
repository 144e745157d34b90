// Attempt (right): LayerNorm as RMSNorm of the centred vector (var = mean((x -
// mean)²) is the mean square of x - mean); the mean with std::accumulate and
// the outputs with std::transform.
#include "exercises/ex09_norms.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace ex09 {
namespace {

double mean(const std::vector<double>& x) {
    return std::accumulate(x.begin(), x.end(), 0.0) / static_cast<double>(x.size());
}

}  // namespace

std::vector<double> rms_norm(const std::vector<double>& x, double eps) {
    double ms = 0;
    for (double v : x) ms += v * v;
    const double r = 1.0 / std::sqrt(ms / static_cast<double>(x.size()) + eps);
    std::vector<double> y;
    for (double v : x) y.push_back(v * r);
    return y;
}

std::vector<double> layer_norm(const std::vector<double>& x, double eps) {
    const double mu = mean(x);
    std::vector<double> centred(x.size());
    std::transform(x.begin(), x.end(), centred.begin(), [mu](double v) { return v - mu; });
    return rms_norm(centred, eps);
}

}  // namespace ex09
