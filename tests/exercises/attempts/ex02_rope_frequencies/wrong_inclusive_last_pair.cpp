// Attempt (wrong): reads "i = 0 … d/2" as inclusive of d/2, returning d/2 + 1 speeds, the last one exactly
// 1/base.
#include "exercises/ex02_rope_frequencies.h"

#include <cmath>

#include "exercises/not_implemented.h"

namespace ex02 {

std::vector<double> rope_thetas(int64_t d, double base) {
    std::vector<double> out;
    for (int64_t i = 0; i <= d / 2; ++i)
        out.push_back(std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(d)));
    return out;
}

double period(double theta) { return 2.0 * 3.14159265358979323846 / theta; }

}  // namespace ex02
