#pragma once
// Figures of lesson 04 drawn from data its parts computed.
#include <cstdint>
#include <filesystem>
#include <vector>

#include "lessons/sliding_window/small_windows.h"

namespace lessons::sliding_window {

// §6.5 agreement accuracy against the subject's distance 3k (k = 1 …
// max_k), one series per window with the seeds' spread, chance 0.5 drawn.
void write_accuracy_by_distance(const std::filesystem::path& path, const std::vector<WindowRuns>& results,
                                int64_t max_k);

}  // namespace lessons::sliding_window
