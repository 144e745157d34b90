// Attempt (wrong): loops over the first dimension of each pair (0, 2, 4, …) and puts that dimension index into
// the formula's i, so the exponent is -2·(2i)/d: the speeds fall twice as fast and the slowest is far below
// the lecture's 1.15e-4.
#include "exercises/ex02_rope_frequencies.h"

#include <cmath>

#include "exercises/not_implemented.h"

namespace ex02 {

std::vector<double> rope_thetas(int64_t d, double base) {
    std::vector<double> out;
    for (int64_t dim = 0; dim < d; dim += 2)
        out.push_back(std::pow(base, -2.0 * static_cast<double>(dim) / static_cast<double>(d)));
    return out;
}

double period(double theta) { return 2.0 * 3.14159265358979323846 / theta; }

}  // namespace ex02
