#pragma once
// Independent training runs (methods × seeds, the models a lesson compares)
// spread over the engine's threads (ag::parallel_tasks). Each run is
// single-threaded inside (the engine's kernels do not split work inside an
// outer parallel region) and writes only its own result, so the numbers are
// the same for any thread count: two cores train two small models at once
// instead of sharing every tiny product (on a 2-core Zen 1, two runs side by
// side trained 15-25% more tokens a second in all than one after the other
// at 2 threads each).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

namespace lessons {

// Calls run(i) for every i < costs.size(), the costliest first (so that the
// threads finish together), and rethrows the first exception a run threw.
void run_independent(const std::vector<int64_t>& costs, const std::function<void(size_t)>& run);

}  // namespace lessons
