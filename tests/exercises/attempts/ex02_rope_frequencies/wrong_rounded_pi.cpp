// Attempt (wrong): writes the period with π rounded to 3.14, so every period is off by 0.05 % (the lecture's
// 54,410 becomes 54,384).
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

double period(double theta) { return 2.0 * 3.14 / theta; }

}  // namespace ex02
