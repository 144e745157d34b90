// Attempt (wrong): averages the squares over n - 1 in RMSNorm as for a sample
// variance; RMSNorm's mean(x²) is over all n elements (and there is no mean to
// estimate).
#include "exercises/ex09_norms.h"

#include <cmath>

namespace ex09 {
namespace {

double mean(const std::vector<double>& x) {
    double s = 0;
    for (double v : x) s += v;
    return s / static_cast<double>(x.size());
}

}  // namespace

std::vector<double> rms_norm(const std::vector<double>& x, double eps) {
    double ms = 0;
    for (double v : x) ms += v * v;
    const double r = 1.0 / std::sqrt(ms / static_cast<double>(x.size() - 1) + eps);
    std::vector<double> y;
    for (double v : x) y.push_back(v * r);
    return y;
}

std::vector<double> layer_norm(const std::vector<double>& x, double eps) {
    const double mu = mean(x);
    double var = 0;
    for (double v : x) var += (v - mu) * (v - mu);
    const double r = 1.0 / std::sqrt(var / static_cast<double>(x.size()) + eps);
    std::vector<double> y;
    for (double v : x) y.push_back((v - mu) * r);
    return y;
}

}  // namespace ex09
