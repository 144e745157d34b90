#include "lessons/sliding_window/figures.h"

#include <algorithm>
#include <numeric>
#include <string>

#include "lessons/common/svg.h"

namespace lessons::sliding_window {

void write_accuracy_by_distance(const std::filesystem::path& path, const std::vector<WindowRuns>& results,
                                int64_t max_k) {
    svg::LinePlot plot{
        "Agreement accuracy against the subject's distance, per window W (mean, bars: min-max over "
        "seeds)",
        "distance from subject to verb (tokens)", "accuracy"};
    plot.markers = true;
    plot.dodge = 4;  // the windows' bars side by side at each distance
    for (const WindowRuns& w : results) {
        svg::Series s{w.window == 0 ? "full attention" : "W = " + std::to_string(w.window), {}, {}};
        for (int64_t k = 1; k <= max_k; ++k) {
            const std::vector<double> seeds = w.per_seed(k, false);
            s.x.push_back(static_cast<double>(3 * k));
            s.y.push_back(std::accumulate(seeds.begin(), seeds.end(), 0.0) / static_cast<double>(seeds.size()));
            s.low.push_back(*std::min_element(seeds.begin(), seeds.end()));
            s.high.push_back(*std::max_element(seeds.begin(), seeds.end()));
        }
        plot.series.push_back(std::move(s));
    }
    plot.references.push_back({0.5, "chance 0.5"});
    // §6.5 the training sentences hold k <= 3: distances beyond 9 are extrapolation
    plot.references.push_back({10.5, "longer than training", true});
    svg::write(path, plot);
}

}  // namespace lessons::sliding_window
