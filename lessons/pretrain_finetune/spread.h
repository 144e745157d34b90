#pragma once
// Mean, smallest and largest of a result over seeds (the lecture reports
// the mean over 3 seeds; the spread shows how much one seed can differ).
#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <vector>

namespace lessons::pretrain_finetune {

struct Spread {
    double mean = 0, min = 0, max = 0;
};

inline Spread spread(const std::vector<double>& values) {
    if (values.empty()) throw std::invalid_argument("spread: no values");
    const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
    return {std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size()), *lo, *hi};
}

}  // namespace lessons::pretrain_finetune
