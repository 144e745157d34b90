// Attempt (wrong): reads "the speeds go geometrically from 1 down to about 1/10000" as an exact range, so it
// spreads the exponents evenly from 0 to -1 and the slowest pair turns exactly 1/base.
#include "exercises/ex02_rope_frequencies.h"

#include <cmath>

#include "exercises/not_implemented.h"

namespace ex02 {

std::vector<double> rope_thetas(int64_t d, double base) {
    const int64_t pairs = d / 2;
    if (pairs == 1) return {1.0};
    std::vector<double> thetas;
    for (int64_t i = 0; i < pairs; ++i)
        thetas.push_back(std::pow(base, -static_cast<double>(i) / static_cast<double>(pairs - 1)));
    return thetas;
}

double period(double theta) { return 2.0 * M_PI / theta; }

}  // namespace ex02
