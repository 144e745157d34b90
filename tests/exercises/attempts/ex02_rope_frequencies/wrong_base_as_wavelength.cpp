// Attempt (wrong): takes base^(2i/d) to be the wavelength of pair i in positions (like the sinusoidal encoding
// of lecture 2), so it returns θ_i = 2π / base^(2i/d): the fastest pair turns 2π per position, not 1 radian.
#include "exercises/ex02_rope_frequencies.h"

#include <cmath>

#include "exercises/not_implemented.h"

namespace ex02 {

std::vector<double> rope_thetas(int64_t d, double base) {
    std::vector<double> out;
    for (int64_t i = 0; i < d / 2; ++i) {
        const double wavelength = std::pow(base, 2.0 * static_cast<double>(i) / static_cast<double>(d));
        out.push_back(2.0 * 3.14159265358979323846 / wavelength);
    }
    return out;
}

double period(double theta) { return 2.0 * 3.14159265358979323846 / theta; }

}  // namespace ex02
