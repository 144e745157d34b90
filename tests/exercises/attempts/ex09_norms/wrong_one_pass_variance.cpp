// Attempt (wrong): computes the variance in one pass as mean(x²) - mean²
// (equal on paper); when the mean is large compared with the spread the two
// huge terms cancel and the variance keeps only a few correct digits.
#include "exercises/ex09_norms.h"

#include <cmath>

#include "exercises/not_implemented.h"

namespace ex09 {

std::vector<double> rms_norm(const std::vector<double>& x, double eps) {
    double sq = 0;
    for (double v : x) sq += v * v;
    const double rms = std::sqrt(sq / static_cast<double>(x.size()) + eps);
    std::vector<double> out;
    out.reserve(x.size());
    for (double v : x) out.push_back(v / rms);
    return out;
}

std::vector<double> layer_norm(const std::vector<double>& x, double eps) {
    double s = 0, sq = 0;
    for (double v : x) {
        s += v;
        sq += v * v;
    }
    const double n = static_cast<double>(x.size());
    const double mu = s / n, var = sq / n - mu * mu;
    const double sd = std::sqrt(var + eps);
    std::vector<double> out;
    out.reserve(x.size());
    for (double v : x) out.push_back((v - mu) / sd);
    return out;
}

}  // namespace ex09
