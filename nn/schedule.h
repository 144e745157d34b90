#pragma once
// Learning-rate schedules: lr(step) for optimiser steps counted from 0.
//
//     optim::WarmupCosine schedule(3e-3, 3e-4, 100, 2000);
//     opt.lr = schedule.lr(step);   // before each opt.step()
#include <cstdint>

namespace optim {

struct Schedule {
    virtual ~Schedule() = default;
    virtual double lr(int64_t step) const = 0;
};

// The same lr at every step.
struct Constant : Schedule {
    explicit Constant(double lr_) : value(lr_) {}
    double lr(int64_t) const override { return value; }
    double value;
};

// Linear warmup from 0 at step 0 to lr_max at step `warmup`, then a half
// cosine from lr_max down to lr_min at step `total`, then lr_min:
//   lr(s) = lr_max · s / warmup                                s < warmup
//   lr(s) = lr_min + (lr_max - lr_min) · (1 + cos(π r)) / 2,   r = (s - warmup) / (total - warmup)
// Throws std::invalid_argument unless 0 <= warmup <= total and
// 0 <= lr_min <= lr_max, and lr() on a negative step.
struct WarmupCosine : Schedule {
    WarmupCosine(double lr_max, double lr_min, int64_t warmup, int64_t total);
    double lr(int64_t step) const override;
    double lr_max, lr_min;
    int64_t warmup, total;
};

}  // namespace optim
