// Attempt (wrong): returns one θ per dimension, like a row of the §4.6 angle matrix (θ_0 … θ_{d/2-1} twice),
// instead of one per pair.
#include "exercises/ex02_rope_frequencies.h"

#include <cmath>

#include "exercises/not_implemented.h"

namespace ex02 {

std::vector<double> rope_thetas(int64_t d, double base) {
    std::vector<double> thetas(static_cast<size_t>(d));
    for (int64_t c = 0; c < d; ++c) {
        const int64_t i = c % (d / 2);  // dims i and i + d/2 share a frequency
        thetas[static_cast<size_t>(c)] = std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(d));
    }
    return thetas;
}

double period(double theta) { return 2.0 * M_PI / theta; }

}  // namespace ex02
