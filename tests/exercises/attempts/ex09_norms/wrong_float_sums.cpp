// Attempt (wrong): accumulates the sums in float ("enough digits for a norm");
// with a mean far larger than the spread the float mean is off by more than the
// spread itself, and LayerNorm's output is wrong.
#include "exercises/ex09_norms.h"

#include <cmath>

namespace ex09 {
namespace {

double mean(const std::vector<double>& x) {
    float s = 0;
    for (double v : x) s += static_cast<float>(v);
    return static_cast<double>(s) / static_cast<double>(x.size());
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
    float var = 0;
    for (double v : x) var += static_cast<float>((v - mu) * (v - mu));
    const double r = 1.0 / std::sqrt(static_cast<double>(var) / static_cast<double>(x.size()) + eps);
    std::vector<double> y;
    for (double v : x) y.push_back((v - mu) * r);
    return y;
}

}  // namespace ex09
