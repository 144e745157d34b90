// Attempt (wrong): writes the exponent -2i/d with the integer i and d, so the division truncates to 0 and
// every pair turns at θ = 1: no range of speeds at all.
#include "exercises/ex02_rope_frequencies.h"

#include <cmath>

#include "exercises/not_implemented.h"

namespace ex02 {

std::vector<double> rope_thetas(int64_t d, double base) {
    std::vector<double> thetas(static_cast<size_t>(d / 2));
    for (int64_t i = 0; i < d / 2; ++i) {
        const int64_t exponent = -2 * i / d;
        thetas[static_cast<size_t>(i)] = std::pow(base, static_cast<double>(exponent));
    }
    return thetas;
}

double period(double theta) { return 2 * M_PI / theta; }

}  // namespace ex02
