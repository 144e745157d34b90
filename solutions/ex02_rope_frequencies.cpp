// Exercise 2 · RoPE's range of speeds: reference solution (lecture §4.5).
#include "exercises/ex02_rope_frequencies.h"

#include <cmath>

namespace ex02 {

std::vector<double> rope_thetas(int64_t d, double base) {
    std::vector<double> thetas;
    for (int64_t i = 0; i < d / 2; ++i)
        thetas.push_back(std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(d)));
    return thetas;
}

double period(double theta) { return 2.0 * M_PI / theta; }

}  // namespace ex02
