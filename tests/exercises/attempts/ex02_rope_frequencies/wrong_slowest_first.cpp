// Attempt (wrong): lists the pairs from the slowest to the fastest, thinking pair 0 is the "hour hand" that
// the others refine, so θ_0 is the slowest speed instead of 1.
#include "exercises/ex02_rope_frequencies.h"

#include <cmath>

#include "exercises/not_implemented.h"

namespace ex02 {

std::vector<double> rope_thetas(int64_t d, double base) {
    std::vector<double> thetas;
    for (int64_t i = d / 2 - 1; i >= 0; --i)
        thetas.push_back(1.0 / std::pow(base, 2.0 * static_cast<double>(i) / static_cast<double>(d)));
    return thetas;
}

double period(double theta) { return 2.0 * M_PI / theta; }

}  // namespace ex02
