// Attempt (wrong): takes the period to be 1/θ, the positions it takes to turn one radian, forgetting that a
// full turn is 2π radians.
#include "exercises/ex02_rope_frequencies.h"

#include <cmath>

#include "exercises/not_implemented.h"

namespace ex02 {

std::vector<double> rope_thetas(int64_t d, double base) {
    std::vector<double> thetas;
    for (int64_t i = 0; 2 * i < d; ++i)
        thetas.push_back(std::exp(-2.0 * static_cast<double>(i) / static_cast<double>(d) * std::log(base)));
    return thetas;
}

double period(double theta) { return 1.0 / theta; }

}  // namespace ex02
