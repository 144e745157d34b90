// Attempt (right): writes base^(-2i/d) as exp(-(i / (d/2))·ln base), filling a vector of d/2 slots by index,
// and takes π from std::acos(-1).
#include "exercises/ex02_rope_frequencies.h"

#include <cmath>

#include "exercises/not_implemented.h"

namespace ex02 {

std::vector<double> rope_thetas(int64_t d, double base) {
    const int64_t pairs = d / 2;
    std::vector<double> out(static_cast<std::size_t>(pairs));
    const double log_base = std::log(base);
    for (std::size_t i = 0; i < out.size(); ++i)
        out[i] = std::exp(-static_cast<double>(i) / static_cast<double>(pairs) * log_base);
    return out;
}

double period(double theta) {
    const double pi = std::acos(-1.0);
    return 2.0 * pi / theta;
}

}  // namespace ex02
