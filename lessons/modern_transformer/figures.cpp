#include "lessons/modern_transformer/figures.h"

#include <cmath>
#include <string>

#include <fmt/format.h>

#include "lessons/common/spread.h"
#include "lessons/common/svg.h"

namespace lessons::modern_transformer {

void perplexity_figure(Report& r, const Options& options, const GptVsModern& result) {
    const int seeds = static_cast<int>(result.models[0].test_perplexity.size());
    const std::string over = seeds == 1 ? std::string("seed 0") : fmt::format("min-max over {} seeds", seeds);
    svg::LinePlot plot{"Test perplexity per model (" + (seeds == 1 ? over : "mean, " + over) + ")", "model",
                       "test perplexity"};
    plot.lines = false;
    svg::Series dots{seeds == 1 ? std::string("seed 0") : "mean; bar: lowest to highest seed", {}, {}};
    for (size_t m = 0; m < result.models.size(); ++m) {
        const Spread ppl = spread(result.models[m].test_perplexity);
        plot.x_categories.push_back(result.models[m].name);
        dots.x.push_back(static_cast<double>(m));
        dots.y.push_back(ppl.mean);
        dots.low.push_back(ppl.min);
        dots.high.push_back(ppl.max);
    }
    plot.series.push_back(dots);
    // The floor is part of the y range: the distance above it is what a
    // model still has to learn, the scale its gap to the other is read on.
    plot.references.push_back({result.floor, fmt::format("the grammar's floor {:.4f}", result.floor)});
    svg::write(output_path(options, "05_perplexity.svg"), plot);

    const double gpt = dots.y[0], modern = dots.y[1];
    const std::string spreads = seeds == 1 ? std::string()
                                           : fmt::format(", against seed-to-seed spreads of {:.4f} and {:.4f}",
                                                         dots.high[0] - dots.low[0], dots.high[1] - dots.low[1]);
    r.figure(
        "05_perplexity.svg",
        fmt::format("Test perplexity{}: GPT {:.4f} and ModernLM {:.4f} sit {:.4f} and {:.4f} above the grammar's "
                    "floor {:.4f} and differ from each other by {:.4f}{}.",
                    seeds == 1 ? std::string(" (seed 0)") : fmt::format(" (the dot: the mean of {} seeds)", seeds), gpt,
                    modern, gpt - result.floor, modern - result.floor, result.floor, std::fabs(modern - gpt), spreads));
}

}  // namespace lessons::modern_transformer
