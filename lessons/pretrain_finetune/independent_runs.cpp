#include "lessons/pretrain_finetune/independent_runs.h"

#include <algorithm>
#include <exception>
#include <numeric>

namespace lessons::pretrain_finetune {

void run_independent(const std::vector<int64_t>& costs, const std::function<void(size_t)>& run) {
    std::vector<size_t> order(costs.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return costs[a] > costs[b]; });
    std::exception_ptr error;
#pragma omp parallel for schedule(dynamic, 1)
    for (size_t i = 0; i < order.size(); ++i) {
        try {
            run(order[i]);
        } catch (...) {
#pragma omp critical(independent_runs_error)
            if (!error) error = std::current_exception();
        }
    }
    if (error) std::rethrow_exception(error);
}

}  // namespace lessons::pretrain_finetune
