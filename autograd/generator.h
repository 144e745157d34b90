#pragma once
// The project's own random numbers: SplitMix64 for the bits, a 53-bit
// uniform and a Box-Muller normal on top. std::normal_distribution is not
// used on purpose: its output differs between standard libraries, and a
// program seeded the same must print the same numbers everywhere.
#include <cmath>
#include <cstdint>

namespace ag {

class Generator {
public:
    explicit Generator(uint64_t seed = 0) : state_(seed) {}

    // SplitMix64 (Steele, Lea & Flood 2014): a 64-bit counter pushed through
    // a bijective mixing function; passes BigCrush, trivially seedable.
    uint64_t next_u64() {
        uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }

    // Uniform in [0, 1): the top 53 bits as a fraction.
    double uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }
    double uniform(double low, double high) { return low + (high - low) * uniform(); }

    // Uniform integer in [0, n), n > 0: floor(u·n) of a 53-bit uniform u
    // (bias below n / 2^53, far below anything measurable here).
    int64_t randint(int64_t n) { return static_cast<int64_t>(uniform() * static_cast<double>(n)); }

    // Standard normal by Box-Muller; the second value of each pair is kept
    // for the next call.
    double normal() {
        if (has_spare_) {
            has_spare_ = false;
            return spare_;
        }
        double u1 = uniform();
        while (u1 <= 0.0) u1 = uniform();
        const double u2 = uniform();
        const double r = std::sqrt(-2.0 * std::log(u1));
        const double angle = 2.0 * M_PI * u2;
        spare_ = r * std::sin(angle);
        has_spare_ = true;
        return r * std::cos(angle);
    }
    double normal(double mean, double std) { return mean + std * normal(); }

private:
    uint64_t state_;
    bool has_spare_ = false;
    double spare_ = 0.0;
};

}  // namespace ag
