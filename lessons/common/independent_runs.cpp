#include "lessons/common/independent_runs.h"

#include <algorithm>
#include <numeric>

#include "autograd/thread_pool.h"

namespace lessons {

void run_independent(const std::vector<int64_t>& costs, const std::function<void(size_t)>& run) {
    std::vector<size_t> order(costs.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return costs[a] > costs[b]; });
    ag::parallel_tasks(static_cast<int64_t>(order.size()), [&](int64_t i) { run(order[static_cast<size_t>(i)]); });
}

}  // namespace lessons
