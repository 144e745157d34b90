// Attempt (right): the speeds are a geometric sequence, so it starts at θ_0 = 1 and multiplies by the ratio
// base^(-2/d) from one pair to the next; the period uses 2π = 2·acos(-1).
#include "exercises/ex02_rope_frequencies.h"

#include <cmath>

#include "exercises/not_implemented.h"

namespace ex02 {

std::vector<double> rope_thetas(int64_t d, double base) {
    const double ratio = std::pow(base, -2.0 / static_cast<double>(d));
    std::vector<double> thetas;
    double theta = 1.0;
    while (static_cast<int64_t>(thetas.size()) < d / 2) {
        thetas.push_back(theta);
        theta *= ratio;
    }
    return thetas;
}

double period(double theta) {
    const double full_turn = 2.0 * std::acos(-1.0);
    return full_turn / theta;
}

}  // namespace ex02
