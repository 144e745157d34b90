// Attempt (wrong): computes the speeds in float ("they are only angles"), so every θ carries a relative error
// of about 1e-7 and the tiny slow ones are not the numbers of the formula.
#include "exercises/ex02_rope_frequencies.h"

#include <cmath>

#include "exercises/not_implemented.h"

namespace ex02 {

std::vector<double> rope_thetas(int64_t d, double base) {
    std::vector<double> out;
    const float b = static_cast<float>(base), n = static_cast<float>(d);
    for (int64_t i = 0; i < d / 2; ++i)
        out.push_back(static_cast<double>(std::pow(b, -2.0f * static_cast<float>(i) / n)));
    return out;
}

double period(double theta) { return 2.0 * 3.14159265358979323846 / theta; }

}  // namespace ex02
