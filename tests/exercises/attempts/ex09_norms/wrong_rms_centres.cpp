// Attempt (wrong): takes RMSNorm for "LayerNorm with the RMS": it still
// subtracts the mean first and divides by the RMS of the centred vector,
// which IS LayerNorm; RMSNorm only scales and keeps the mean.
#include "exercises/ex09_norms.h"

#include <cmath>

#include "exercises/not_implemented.h"

namespace ex09 {
namespace {

std::vector<double> centred(const std::vector<double>& x) {
    double mu = 0;
    for (double v : x) mu += v;
    mu /= static_cast<double>(x.size());
    std::vector<double> c;
    for (double v : x) c.push_back(v - mu);
    return c;
}

double root_mean_square(const std::vector<double>& x, double eps) {
    double s = 0;
    for (double v : x) s += v * v;
    return std::sqrt(s / static_cast<double>(x.size()) + eps);
}

}  // namespace

std::vector<double> rms_norm(const std::vector<double>& x, double eps) {
    std::vector<double> c = centred(x);
    const double r = root_mean_square(c, eps);
    for (double& v : c) v /= r;
    return c;
}

std::vector<double> layer_norm(const std::vector<double>& x, double eps) {
    std::vector<double> c = centred(x);
    const double sd = root_mean_square(c, eps);  // the biased variance of x, plus eps
    for (double& v : c) v /= sd;
    return c;
}

}  // namespace ex09
