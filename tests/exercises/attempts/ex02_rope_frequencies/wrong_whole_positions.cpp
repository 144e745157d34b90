// Attempt (wrong): reads "how many positions for one full turn" as a whole number of positions and rounds the
// period up (7 for θ = 1), although the period 2π/θ is a real number.
#include "exercises/ex02_rope_frequencies.h"

#include <cmath>

#include "exercises/not_implemented.h"

namespace ex02 {
std::vector<double> rope_thetas(int64_t d, double base) {
    std::vector<double> out;
    for (int64_t i = 0; i < d / 2; ++i)
        out.push_back(std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(d)));
    return out;
}

double period(double theta) { return std::ceil(2.0 * 3.14159265358979323846 / theta); }

}  // namespace ex02
