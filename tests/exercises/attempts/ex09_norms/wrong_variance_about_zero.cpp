// Attempt (wrong): LayerNorm centres x but scales by the RMS of x itself,
// sqrt(mean(x²) + eps), mixing up the two norms; the variance is the mean
// square about the MEAN, mean((x - mean)²).
#include "exercises/ex09_norms.h"

#include <cmath>

#include "exercises/not_implemented.h"

namespace ex09 {
namespace {

double rms(const std::vector<double>& x, double eps) {
    double s = 0;
    for (double v : x) s += v * v;
    return std::sqrt(s / static_cast<double>(x.size()) + eps);
}

}  // namespace

std::vector<double> rms_norm(const std::vector<double>& x, double eps) {
    const double r = rms(x, eps);
    std::vector<double> y;
    for (double v : x) y.push_back(v / r);
    return y;
}

std::vector<double> layer_norm(const std::vector<double>& x, double eps) {
    double mu = 0;
    for (double v : x) mu += v;
    mu /= static_cast<double>(x.size());
    const double r = rms(x, eps);
    std::vector<double> y;
    for (double v : x) y.push_back((v - mu) / r);
    return y;
}

}  // namespace ex09
