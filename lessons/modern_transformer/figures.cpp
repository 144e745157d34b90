#include "lessons/modern_transformer/figures.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "data/farm_language.h"
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

void accuracy_by_k_figure(Report& r, const Options& options, const PositionEncodings& encodings, int trained_k) {
    const std::array<EncodingRuns, 3>& all = encodings.encodings;
    const int seeds = static_cast<int>(all[0].scores.size()), largest = static_cast<int>(all[0].scores[0].size());
    svg::LinePlot plot{seeds == 1
                           ? std::string("Agreement accuracy against k (seed 0)")
                           : fmt::format("Agreement accuracy against k (mean, bars: min-max over {} seeds)", seeds),
                       "k, attractors between subject and verb (the subject is 3k tokens back)", "accuracy"};
    plot.markers = true;
    plot.dodge = 4;  // the encodings' bars side by side at each k
    double lowest_within = 1;
    std::vector<std::string> at_largest;
    for (size_t e = 0; e < kEncodings.size(); ++e) {
        svg::Series s{kEncodings[e].name, {}, {}};
        for (int k = 1; k <= largest; ++k) {
            const Spread accuracy = spread(all[e].accuracy_at(k));
            s.x.push_back(k);
            s.y.push_back(accuracy.mean);
            s.low.push_back(accuracy.min);
            s.high.push_back(accuracy.max);
            if (k <= trained_k) lowest_within = std::min(lowest_within, accuracy.mean);
            if (k == largest)
                at_largest.push_back(seeds == 1 ? fmt::format("{} {:.3f}", kEncodings[e].name, accuracy.mean)
                                                : fmt::format("{} {:.3f} (seeds {:.3f}-{:.3f})", kEncodings[e].name,
                                                              accuracy.mean, accuracy.min, accuracy.max));
        }
        plot.series.push_back(std::move(s));
    }
    plot.references.push_back({0.5, "chance 0.5"});
    // the training sentences hold k <= trained_k: right of the line is extrapolation
    plot.references.push_back({trained_k + 0.5, "longer than training", true});
    svg::write(output_path(options, "05_accuracy_by_k.svg"), plot);
    r.figure("05_accuracy_by_k.svg",
             fmt::format("Up to k = {}, the lengths the models were trained on, every encoding's {}accuracy is {}; "
                         "at k = {} it is {}.",
                         trained_k, seeds == 1 ? "" : "mean ",
                         lowest_within == 1 ? std::string("1") : fmt::format("at least {:.3f}", lowest_within), largest,
                         fmt::format("{}, {} and {}", at_largest[0], at_largest[1], at_largest[2])));
}

namespace {

std::vector<std::string> tokens_of(const AttentionMap& map) {
    std::vector<std::string> tokens;
    for (int64_t id : map.ids) tokens.emplace_back(farm::token(id));
    return tokens;
}

// Head h of the map's layer `layer`, its rows and columns labelled by the
// tokens and the subject's cell for the verb outlined.
svg::Heatmap head_panel(const AttentionMap& map, size_t layer, size_t h, std::string caption) {
    svg::Heatmap panel{std::move(caption), map.weights.at(layer).at(h), 0, 1};
    panel.x_ticks = panel.y_ticks = tokens_of(map);
    panel.marked = {{static_cast<size_t>(map.verb_query), static_cast<size_t>(kSubject)}};
    panel.marked_label = "the subject, for the next verb";
    return panel;
}

}  // namespace

void attention_map_figure(Report& r, const Options& options, const AttentionMap& map, const std::string& model) {
    const std::vector<std::string> tokens = tokens_of(map);
    const auto verb_query = static_cast<size_t>(map.verb_query), subject = static_cast<size_t>(kSubject);
    svg::HeatmapGrid grid{fmt::format("{}, layer {} of {}: attention weights on one test sentence", model,
                                      map.layer + 1, map.weights.size()),
                          2};
    grid.x_label = "key: the token attended to";
    grid.y_label = "query: the token attending";
    const auto& heads = map.weights[map.layer];
    for (size_t h = 0; h < heads.size(); ++h)
        grid.panels.push_back(head_panel(
            map, map.layer, h, fmt::format("head {}: {:.2f} on the subject", h + 1, map.subject_weight(map.layer, h))));
    svg::write(output_path(options, "05_attention_map.svg"), grid);
    const auto k = static_cast<int>((map.verb_query - kSubject) / 3);
    r.figure("05_attention_map.svg",
             fmt::format("In the row of \"{}\", the position that predicts the verb \"{}\", head {} of layer {} "
                         "puts {:.3f} on the subject \"{}\" (outlined), {} tokens back past {}: the subject "
                         "weight below is this largest weight over layers and heads, averaged over many prefixes.",
                         tokens[verb_query], tokens[verb_query + 1], map.head + 1, map.layer + 1,
                         map.subject_weight(map.layer, map.head), tokens[subject], map.verb_query - kSubject,
                         count_of(k, "attractor")));
}

void long_prefix_figure(Report& r, const Options& options, const AttentionMap& within, const AttentionMap& beyond,
                        const std::string& model) {
    const size_t layer = within.layer, head = within.head;
    const auto k_within = static_cast<int>((within.verb_query - kSubject) / 3),
               k_beyond = static_cast<int>((beyond.verb_query - kSubject) / 3);
    const double before = within.subject_weight(layer, head), after = beyond.subject_weight(layer, head);
    svg::HeatmapGrid grid{fmt::format("{}, layer {} head {}, on a prefix with {}", model, layer + 1, head + 1,
                                      count_of(k_beyond, "attractor")),
                          1};
    grid.x_label = "key: the token attended to";
    grid.y_label = "query: the token attending";
    grid.panels.push_back(
        head_panel(beyond, layer, head, fmt::format("{:.2f} on the subject from the last position", after)));
    // where the last position looks instead: its row's largest weight
    const std::vector<double>& row = beyond.weights[layer][head][static_cast<size_t>(beyond.verb_query)];
    const auto most = static_cast<int64_t>(std::max_element(row.begin(), row.end()) - row.begin());
    svg::write(output_path(options, "05_attention_long_prefix.svg"), grid);
    r.figure("05_attention_long_prefix.svg",
             fmt::format("The same head with {} instead of {}, the subject {} tokens back: it puts {:.3f} on the "
                         "subject (outlined), where it put {:.3f}, and {:.3f} on \"{}\", {} tokens back.",
                         count_of(k_beyond, "attractor"), k_within, beyond.verb_query - kSubject, after, before,
                         row[static_cast<size_t>(most)], farm::token(beyond.ids[static_cast<size_t>(most)]),
                         beyond.verb_query - most));
}

void subject_weight_figure(Report& r, const Options& options, const PositionDiagnosis& diagnosis, int trained_k) {
    const int seeds = static_cast<int>(diagnosis.models.size() / kEncodings.size());
    svg::LinePlot plot{"Largest attention on the subject when predicting the verb, RoPE",
                       "k, attractors between subject and verb (the subject is 3k tokens back)",
                       "max weight over layers and heads"};
    plot.markers = true;
    double lowest_within = 1;
    std::vector<std::string> at_largest;
    for (int seed = 0; seed < seeds; ++seed) {
        const ModelDiagnosis& m = diagnosis.at(kRope, seed);
        svg::Series series{fmt::format("RoPE seed {}", seed), {}, m.weight};
        for (size_t k = 1; k <= m.weight.size(); ++k) series.x.push_back(static_cast<double>(k));
        plot.series.push_back(std::move(series));
        for (int k = 1; k <= trained_k; ++k)
            lowest_within = std::min(lowest_within, m.weight[static_cast<size_t>(k - 1)]);
        at_largest.push_back(fmt::format("{:.3f}", m.weight.back()));
    }
    plot.references.push_back({trained_k + 0.5, "longer than training", true});
    svg::write(output_path(options, "05_subject_attention.svg"), plot);
    r.figure("05_subject_attention.svg",
             fmt::format("RoPE, seed by seed, mean over the prefixes: up to k = {} every seed puts at least {:.3f} on "
                         "the subject, at k = {} {} ({}).",
                         trained_k, lowest_within, diagnosis.models.front().weight.size(), fmt::join(at_largest, ", "),
                         seeds == 1 ? "seed 0" : "seed 0 first"));
}

void weight_accuracy_figure(Report& r, const Options& options, const PositionDiagnosis& diagnosis) {
    const WeightExplains& explains = diagnosis.explains;
    svg::LinePlot plot{"Accuracy against subject weight at k = 4-6, every model", "subject weight at k = 4-6",
                       "accuracy at k = 4-6"};
    plot.lines = false;
    for (size_t e = 0; e < kEncodings.size(); ++e) {
        svg::Series series{kEncodings[e].name, {}, {}};
        for (const ModelDiagnosis& m : diagnosis.models)
            if (m.encoding == e) {
                series.x.push_back(m.weight_beyond);
                series.y.push_back(m.accuracy_beyond);
            }
        plot.series.push_back(std::move(series));
    }
    plot.references.push_back({0.5, "chance 0.5"});
    if (explains.below > 0)
        plot.references.push_back({explains.threshold, fmt::format("split at {:.3f}", explains.threshold), true});
    svg::write(output_path(options, "05_weight_accuracy.svg"), plot);
    r.figure("05_weight_accuracy.svg",
             fmt::format("Every model (encoding and seed): accuracy at k = 4-6 against its subject weight there{}.",
                         std::isfinite(explains.correlation) ? fmt::format(", r = {:.3f}", explains.correlation)
                                                             : std::string()));
}

}  // namespace lessons::modern_transformer
