#include "nn/schedule.h"

#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

namespace optim {

WarmupCosine::WarmupCosine(double lr_max_, double lr_min_, int64_t warmup_, int64_t total_)
    : lr_max(lr_max_), lr_min(lr_min_), warmup(warmup_), total(total_) {
    if (!(0 <= warmup && warmup <= total))
        throw std::invalid_argument(
            fmt::format("WarmupCosine: need 0 <= warmup <= total, got warmup {}, total {}", warmup, total));
    if (!(0.0 <= lr_min && lr_min <= lr_max))
        throw std::invalid_argument(
            fmt::format("WarmupCosine: need 0 <= lr_min <= lr_max, got lr_min {}, lr_max {}", lr_min, lr_max));
}

double WarmupCosine::lr(int64_t step) const {
    if (step < 0) throw std::invalid_argument(fmt::format("WarmupCosine: step {} is negative", step));
    if (step < warmup) return lr_max * static_cast<double>(step) / static_cast<double>(warmup);
    if (step >= total) return lr_min;
    const double r = static_cast<double>(step - warmup) / static_cast<double>(total - warmup);
    return lr_min + (lr_max - lr_min) * 0.5 * (1.0 + std::cos(M_PI * r));
}

}  // namespace optim
