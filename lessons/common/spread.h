#pragma once
// A result over seeds (the lecture reports the mean over 3 seeds; the
// spread shows how much one seed can differ), and the one rule by which
// the lessons decide a strict order between two methods over seeds.
#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace lessons {

struct Spread {
    double mean = 0, min = 0, max = 0;
    std::vector<double> values;  // seed by seed
    // Seed `seed`'s value; a result of one value (zero-shot has no seed) is
    // the same for every seed.
    double at(size_t seed) const { return values.size() == 1 ? values.front() : values.at(seed); }
};

inline Spread spread(const std::vector<double>& values) {
    if (values.empty()) throw std::invalid_argument("spread: no values");
    const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
    return {std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size()), *lo, *hi, values};
}

// "A beats B" is the lecture's finding here when it holds on the means and
// in every seed taken one by one. Every method runs on the same seeds, so
// seed i of A meets seed i of B (whatever seed i draws, it draws for both);
// a margin that one seed reverses is no clear difference,
// however the means fall. With one seed there is nothing to weigh the
// margin against, and the reason says so.
struct SeedOrder {
    bool on_means = false;
    int seeds = 0, holding = 0;  // in how many of the seeds it holds
    bool clear() const { return on_means && holding == seeds; }
    // "holds in 3 of 3 seeds", "holds on the means, but in 2 of 3 seeds
    // only: not a clear difference", "does not hold (in 1 of 3 seeds)"
    std::string str() const {
        if (seeds < 2)
            return on_means ? "holds (one seed, so no spread to weigh the margin against)" : "does not hold (one seed)";
        if (!on_means) return fmt::format("does not hold on the means (it holds in {} of {} seeds)", holding, seeds);
        if (holding == seeds) return fmt::format("holds in each of the {} seeds", seeds);
        return fmt::format("holds on the means, but in {} of {} seeds only: not a clear difference", holding, seeds);
    }
};

// `holds(i)`: whether the order holds in seed i.
template <typename Holds>
SeedOrder seed_order(bool on_means, int seeds, Holds holds) {
    SeedOrder o{on_means, seeds, 0};
    for (int i = 0; i < seeds; ++i) o.holding += holds(static_cast<size_t>(i)) ? 1 : 0;
    return o;
}

}  // namespace lessons
