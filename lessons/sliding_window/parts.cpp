#include "lessons/sliding_window/parts.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <string>

#include <fmt/ranges.h>

#include "data/farm_language.h"
#include "lessons/common/svg.h"
#include "lessons/sliding_window/figures.h"
#include "lessons/sliding_window/implementation_check.h"
#include "lessons/sliding_window/implementations.h"
#include "lessons/sliding_window/receptive_field.h"
#include "lessons/sliding_window/rolling_cache.h"
#include "lessons/sliding_window/small_windows.h"

namespace lessons::sliding_window {
namespace {

constexpr double kTolerance = 1e-12;

std::string seeds_text(const Options& options) {
    return options.seeds == 1 ? "seed 0" : fmt::format("seeds 0 … {}", options.seeds - 1);
}

// A time, or a ratio of times, to the 3 significant digits a shared machine
// can tell.
double three_digits(double x) { return std::stod(fmt::format("{:.3g}", x)); }

// A fitted exponent to 2 decimals, as the page shows it: the claim is
// decided on the exponents shown.
double two_decimals(double x) { return std::round(x * 100) / 100; }

// A verdict's closing words.
std::string outcome(bool reproduced) { return reproduced ? "reproduced" : "not reproduced"; }

// ---- part 1 ------------------------------------------------------------------

// The mask as a table: query t, a 0/1 per key j, and the keys t sees.
std::vector<std::vector<Cell>> mask_rows(const EngineMask& mask) {
    std::vector<std::vector<Cell>> rows;
    for (size_t t = 0; t < mask.mask.size(); ++t) {
        std::vector<Cell> row{t};
        for (const double bit : mask.mask[t]) row.emplace_back(static_cast<int64_t>(bit));
        row.emplace_back(mask.visible_keys[t]);
        rows.push_back(std::move(row));
    }
    return rows;
}

void part1_masks(Report& r, const Options& options) {
    constexpr int64_t T = 8;
    const std::vector<EngineMask> masks{engine_mask(4, T), engine_mask(6, T)};
    const int64_t mismatches = masks[0].mismatches + masks[1].mismatches;  // cells that break t - W < j ≤ t
    r.paragraph(
        "§6.1 The slides' w is Longformer's two-sided window width; a causal window keeps w/2 + 1 tokens, the "
        "current one on the diagonal. The code, like Mistral, takes the number of visible tokens W: query t sees "
        "key $j$ iff $t - W < j ≤ t$. The masks below are read off the engine: a 1 where `ag::causal_attention` with "
        "window W gives key j a nonzero weight for query t.");
    svg::HeatmapGrid figure{"Sliding-window masks (query t sees key j: dark)", 2};
    figure.x_label = "key j";
    figure.y_label = "query t";
    std::vector<std::string> columns{"t"};
    for (int64_t j = 0; j < T; ++j) columns.push_back(fmt::format("j={}", j));
    columns.push_back("visible");
    for (const EngineMask& mask : masks) {
        const int64_t w = mask.slides_w, W = mask.window;
        r.paragraph("slides' w = {}: W = w/2 + 1 = {} visible tokens", w, W);
        r.table(fmt::format("mask_w{}", w), columns, mask_rows(mask));
        r.value(fmt::format("w{}_visible_tokens", w), static_cast<double>(W));
        figure.panels.push_back({fmt::format("w = {} (W = {})", w, W), mask.mask, 0.0, 1.0, true});
    }
    svg::write(output_path(options, "04_masks.svg"), figure);
    r.figure("04_masks.svg", "The engine's masks for the slides' w = 4 and w = 6: a band of W = 3 and 4 keys");
    r.claim(
        {"engine_mask_matches_rule",
         "A causal window of the slides' width w keeps w/2 + 1 tokens, the current one on the diagonal: 3 for "
         "w = 4, 4 for w = 6.",
         "w = 4: 3 tokens, w = 6: 4",
         fmt::format("w = 4: {} tokens, w = 6: {}", masks[0].most_visible, masks[1].most_visible), mismatches == 0,
         mismatches == 0
             ? fmt::format("every one of the {} mask cells read off the engine follows t - W < j ≤ t", 2 * T * T)
             : fmt::format("{} of the {} mask cells read off the engine break t - W < j ≤ t", mismatches, 2 * T * T),
         ClaimKind::check,
         fmt::format("The engine's masks for w = 4 and w = 6 keep {} and {} tokens, the lecture's 3 and 4, with {} "
                     "cells off the band: {}.",
                     masks[0].most_visible, masks[1].most_visible, mismatches, outcome(mismatches == 0))});
    r.takeaway(
        "each row keeps only the diagonal and the W-1 tokens to its left: a band of width W instead "
        "of the full lower triangle.");
}

// ---- part 2 ------------------------------------------------------------------

// The window and head size of the cost measurements.
constexpr int64_t kCostWindow = 64, kCostDim = 64;

// One row per length T: T, then a cell per implementation and the engine.
std::vector<std::vector<Cell>> per_length(const Timing& timing, const std::function<double(const Calls&, size_t)>& f) {
    std::vector<std::vector<Cell>> rows;
    for (size_t j = 0; j < timing.lengths.size(); ++j) {
        std::vector<Cell> row{static_cast<int64_t>(timing.lengths[j])};
        for (const Calls& c : timing.implementations) row.emplace_back(three_digits(f(c, j)));
        row.emplace_back(three_digits(f(timing.engine, j)));
        rows.push_back(std::move(row));
    }
    return rows;
}

// §6.2 the arithmetic, from the shapes, no clock involved: per
// implementation, its FLOPs at each length.
std::vector<std::vector<double>> report_flops(Report& r, const std::vector<int64_t>& lengths) {
    const std::vector<Implementation>& implementations = window_implementations();
    std::vector<std::vector<double>> counts(implementations.size());
    std::vector<std::vector<Cell>> rows;
    for (const int64_t T : lengths) {
        std::vector<Cell> row{T};
        for (size_t i = 0; i < implementations.size(); ++i) {
            counts[i].push_back(flops(implementations[i], T, kCostWindow, kCostDim));
            row.emplace_back(counts[i].back());
        }
        row.emplace_back(three_digits(counts[0].back() / counts[2].back()));
        rows.push_back(std::move(row));
    }
    r.paragraph(
        "The arithmetic of each, W = {}, d = {}, counted from its shapes: 4·d FLOPs per query-key score it computes "
        "(d multiply-adds for q·k and d for the weight times v's row). The naive one computes all T² scores, the for "
        "loop only the visible T·W - W(W-1)/2, the sliding chunks a W×2W block per chunk of W queries, ⌈T/W⌉·2W²: "
        "about twice the visible ones, in one large product instead of T small ones.",
        kCostWindow, kCostDim);
    r.table("flops", {"T", "naive FLOPs", "for loop FLOPs", "sliding chunks FLOPs", "naive / chunks"}, rows);
    return counts;
}

void report_timing(Report& r, const Timing& timing) {
    r.paragraph(
        "Time per call on one thread: the median of {} calls, after one untimed call each, the four taking turns call "
        "by call so that a burst of load on this shared machine slows them alike; every output equals the engine's to "
        "{}:",
        timing.repeats, Cell(timing.worst).str(true));
    const std::vector<Calls>& calls = timing.implementations;
    std::vector<std::vector<Cell>> rows = per_length(timing, [](const Calls& c, size_t j) { return c.median_ms[j]; });
    for (size_t j = 0; j < rows.size(); ++j)
        rows[j].emplace_back(three_digits(calls[0].median_ms[j] / calls[2].median_ms[j]));
    r.table("timing",
            {"T", "naive ms", "for loop ms", "sliding chunks ms", "ag::causal_attention ms", "naive / chunks"}, rows);
    r.value("timed_calls", static_cast<double>(timing.repeats));
    r.value("max_timed_minus_engine", timing.worst);
    r.paragraph("Slowest ÷ fastest of the {} calls (1: no noise at all):", timing.repeats);
    r.table("timing_spread", {"T", "naive", "for loop", "sliding chunks", "ag::causal_attention"},
            per_length(timing, [](const Calls& c, size_t j) { return c.slowest_ms[j] / c.fastest_ms[j]; }));
}

// Medians against T on log-log axes, with the guides c·T² and c·T through
// the naive one's and the sliding chunks' medians at the middle length: a
// curve steeper than its guide crosses it from below.
void timing_figure(Report& r, const Options& options, const Timing& timing) {
    const std::vector<Implementation>& implementations = window_implementations();
    const std::vector<double>& lengths = timing.lengths;
    const size_t middle = lengths.size() / 2;
    const auto guide = [&](const std::string& name, const Calls& through, double power) {
        std::vector<double> y;
        for (const double T : lengths) y.push_back(through.median_ms[middle] * std::pow(T / lengths[middle], power));
        return svg::Series{name, lengths, y, true};
    };
    svg::LinePlot plot{"Sliding-window attention, one thread (W = 64, d = 64)", "sequence length T",
                       "median time per call (ms)"};
    plot.log_x = plot.log_y = true;
    plot.markers = true;
    for (size_t i = 0; i < implementations.size(); ++i)
        plot.series.push_back({implementations[i].name, lengths, timing.implementations[i].median_ms});
    plot.series.push_back({"ag::causal_attention", lengths, timing.engine.median_ms});
    plot.series.push_back(guide("∝ T²", timing.implementations[0], 2.0));
    plot.series.push_back(guide("∝ T", timing.implementations[2], 1.0));
    svg::write(output_path(options, "04_timing.svg"), plot);
    r.figure("04_timing.svg",
             fmt::format("Median time per call against T (log-log), one thread, W = 64, d = 64; grey dashes: T² "
                         "through the naive one's median at T = {:g}, grey dots: T through the sliding chunks'",
                         lengths[middle]));
}

// §6.2 the exponent p of time ≈ c·T^p per implementation, and the claim
// decided on the naive one's and the sliding chunks'.
void report_growth(Report& r, const Timing& timing, const std::vector<std::vector<double>>& flop_counts) {
    constexpr double kExponentTolerance = 0.35;
    const std::vector<Implementation>& implementations = window_implementations();
    const std::vector<double>& lengths = timing.lengths;
    std::vector<double> exponents;
    for (const Calls& c : timing.implementations)
        exponents.push_back(two_decimals(growth_exponent(lengths, c.median_ms)));
    const auto within = [&](size_t i) {
        return std::abs(exponents[i] - implementations[i].exponent) <= kExponentTolerance;
    };
    const bool reproduced = within(0) && within(2);
    const std::string fails = !within(0) && !within(2) ? "neither exponent is"
                              : !within(0)             ? "the naive one's exponent is not"
                                                       : "the sliding chunks' exponent is not";
    r.claim({"naive_quadratic_chunks_linear",
             "The naive implementation's time grows as T²; the sliding chunks' as T·W, linear in T at a fixed W.",
             "O(T²), O(T·W)", fmt::format("T^{:.2f}, T^{:.2f}", exponents[0], exponents[2]), reproduced,
             (reproduced ? "both fitted exponents are" : fails) + " within the tolerance of the lecture's",
             ClaimKind::check,
             fmt::format("Fitted time exponents: naive {:.2f} against the lecture's 2, sliding chunks {:.2f} against "
                         "1, tolerance {}: {}.",
                         exponents[0], exponents[2], kExponentTolerance, outcome(reproduced))});

    std::vector<std::vector<Cell>> rows;
    for (size_t i = 0; i < implementations.size(); ++i)
        rows.push_back({implementations[i].name, two_decimals(growth_exponent(lengths, flop_counts[i])), exponents[i],
                        implementations[i].exponent, within(i)});
    rows.push_back(
        {"ag::causal_attention", "—", two_decimals(growth_exponent(lengths, timing.engine.median_ms)), "—", "—"});
    r.paragraph(
        "The exponent p of time ≈ c·T^p is the slope of the least-squares line through log time against log T over "
        "all {} timed lengths (T = {:g} … {:g}); the FLOPs exponent is fitted the same way to the FLOP counts. An "
        "exponent is within the tolerance when it lies within {} of the lecture's; the claim needs the naive one's "
        "and the sliding chunks'.",
        lengths.size(), lengths.front(), lengths.back(), kExponentTolerance);
    r.table("growth_exponents",
            {"implementation", "FLOPs exponent", "time exponent", "lecture's exponent", "within tolerance"}, rows);
    r.value("exponent_tolerance", kExponentTolerance);
    r.paragraph(
        "The for loop does the least arithmetic but in T calls of small engine ops, like the slides' Python loop: "
        "its time is their per-call overhead, linear in T. The engine's fused op does $O(T \\cdot W)$ arithmetic but "
        "finds "
        "each query's visible keys by scanning all T keys, $O(T^2)$ comparisons: negligible at the training lengths "
        "(T ≤ 40), visible at these T, so its exponent can lie between 1 and 2.");
    const Calls& naive = timing.implementations[0];
    const double T = lengths.back();
    r.paragraph(
        "The untimed first naive call at T = {:g} took {:.1f}× the median: it takes its buffers fresh from the "
        "system, the timed calls reuse them from the engine's pool, so the medians hold no allocation. What can push "
        "the naive exponent a little above the arithmetic's 2 is memory: each of its T×T matrices takes 8·T² bytes, "
        "{:g} MiB at T = {:g}, and once they outgrow the caches every pass over them waits on main memory.",
        T, naive.first_ms.back() / naive.median_ms.back(), 8.0 * T * T / (1 << 20), T);
}

void part2_implementations(Report& r, const Options& options) {
    // Equal outputs, on a length that is not a multiple of W (the last chunk
    // is padded) and for windows from 1 (the diagonal only) to more than T
    // (plain causal attention).
    const int64_t T = options.quick ? 37 : 100, d = 16;
    const EqualityCheck equal = compare_with_engine(T, d, {1, 3, 8, 64, T + 5}, options.seeds);
    r.paragraph(
        "§6.2 The slides' three implementations (`lessons/sliding_window/implementations.cpp`) against the engine's "
        "fused `ag::causal_attention`, one head, q, k, v ~ N(0, 1) [T = {}, d = {}], {}:",
        T, d, seeds_text(options));
    std::vector<std::vector<Cell>> rows;
    for (const EqualOutputs& w : equal.windows) {
        std::vector<Cell> row{w.window, T};
        for (const double diff : w.diff) row.emplace_back(diff);
        rows.push_back(std::move(row));
    }
    const double worst = equal.worst;
    r.table("equal_outputs", {"W", "T", "naive - engine", "for loop - engine", "sliding chunks - engine"}, rows);
    r.value("max_implementation_minus_engine", worst);
    r.claim({"implementations_equal", "The naive, for-loop and sliding-chunks implementations give the same output.",
             4.4e-16, worst, worst < kTolerance,
             fmt::format("the largest difference from the engine over W = 1 … {} is {}, {} the tolerance {}", T + 5,
                         Cell(worst).str(true), worst < kTolerance ? "below" : "above", Cell(kTolerance).str(true)),
             ClaimKind::check,
             fmt::format("The three implementations differ from the engine by at most {} (the lecture's 4.4e-16), "
                         "tolerance {}: {}.",
                         Cell(worst).str(true), Cell(kTolerance).str(true), outcome(worst < kTolerance))});

    // Their cost against T, one thread.
    const std::vector<int64_t> lengths =
        options.quick ? std::vector<int64_t>{64, 128, 256} : std::vector<int64_t>{128, 256, 512, 1024, 2048};
    const std::vector<std::vector<double>> flop_counts = report_flops(r, lengths);
    const Timing timing = time_implementations(lengths, kCostWindow, kCostDim, options.quick ? 3 : 7);
    report_timing(r, timing);
    timing_figure(r, options, timing);
    report_growth(r, timing, flop_counts);
    r.takeaway(
        "all three compute the same thing; the naive one still pays $O(T^2)$ for a mask that throws most "
        "of it away, the sliding chunks pay $O(T \\cdot W)$ in a few large batched products.");
}

// ---- part 3 ------------------------------------------------------------------

void part3_receptive_field(Report& r, const Options& options) {
    constexpr int64_t W = 4, layers = 4, changed = 1;
    constexpr int64_t T = changed + layers * (W - 1) + 4;
    nn::LMConfig cfg = nn::LMConfig::modern_lm();
    cfg.window = W;
    cfg.n_layers = layers;
    r.paragraph(
        "§6.3 An untrained ModernLM with {} layers and W = {} reads {} tokens twice, the second time with token {} "
        "changed. After each layer L, which positions' outputs moved (|Δ| > 0)? ({})",
        layers, W, T, changed, seeds_text(options));
    const ReceptiveField field = measure_receptive_field(cfg, T, changed, options.seeds);
    std::vector<std::vector<Cell>> rows;
    std::vector<std::vector<double>> moved_map;  // seed 0: per layer, per position
    for (const LayerReach& l : field.layers) {
        rows.push_back({l.seed, l.layer, l.first, l.last, l.moved, l.reach, l.expected, l.exact});
        if (l.seed == 0) moved_map.push_back(l.moved_at);
    }
    const int64_t exact_layers = field.exact_layers, measured_layers = static_cast<int64_t>(field.layers.size());
    r.table("receptive_field",
            {"seed", "layer L", "first moved", "last moved", "positions moved", "reach", "L(W-1)", "equal"}, rows);
    r.paragraph(
        "Each layer passes the change W - 1 = {} positions further right; positions before token {} never move: "
        "attention is causal.",
        W - 1, changed);
    svg::HeatmapGrid figure{fmt::format("Outputs that moved when token {} changed (W = {}, seed 0)", changed, W), 1};
    figure.x_label = "position";
    figure.y_label = "layer";
    svg::Heatmap& moved = figure.panels.emplace_back();
    moved.caption = "dark: the output moved";
    moved.values = moved_map, moved.lo = 0, moved.hi = 1;
    for (int64_t t = 0; t < T; ++t) moved.x_ticks.push_back(std::to_string(t));
    // §6.3 the edge each layer should reach: position changed + L(W-1)
    for (size_t l = 0; l < moved_map.size(); ++l) {
        moved.y_ticks.push_back(fmt::format("L = {}", l + 1));
        const size_t edge = static_cast<size_t>(changed) + (l + 1) * static_cast<size_t>(W - 1);
        if (edge < static_cast<size_t>(T)) moved.marked.emplace_back(l, edge);
    }
    moved.marked_label = fmt::format("token {} + L(W-1): the predicted edge", changed);
    svg::write(output_path(options, "04_receptive_field.svg"), figure);
    r.figure("04_receptive_field.svg",
             fmt::format("Each layer moves the change W - 1 = {} positions further right: the dark run of every row "
                         "ends at the outlined cell, and nothing left of token {} moves.",
                         W - 1, changed));
    const bool exact = exact_layers == measured_layers;
    r.claim({"reach_is_L_times_W_minus_1",
             "L stacked windows of W tokens reach exactly L(W-1) positions: each layer passes a change W - 1 further.",
             "L(W-1)", fmt::format("L(W-1) at {} of {} layers", exact_layers, measured_layers), exact,
             exact ? fmt::format("after layer L exactly positions {} … {} + L·{} moved, at every layer and seed",
                                 changed, changed, W - 1)
                   : fmt::format("{} of {} (seed, layer) pairs moved a different set of positions",
                                 measured_layers - exact_layers, measured_layers),
             ClaimKind::check,
             fmt::format("Changing token 1 moved exactly L(W - 1) positions at {} of {} (seed, layer) pairs, as the "
                         "lecture states: {}.",
                         exact_layers, measured_layers, outcome(exact))});
    r.takeaway(
        fmt::format("L stacked windows of W tokens reach L(W-1) positions back: Mistral 7B's 32 layers "
                    "with W = 4096 reach {} tokens, but only by relaying through every layer.",
                    32 * 4095));
}

// ---- part 4 ------------------------------------------------------------------

// The first position whose logits are off, as a table cell.
Cell first_wrong_cell(const LogitsComparison& c) { return c.first_wrong < 0 ? Cell("none") : Cell(c.first_wrong); }

void part4_rolling_cache(Report& r, const Options& options) {
    constexpr int64_t W = 6;
    const int64_t new_tokens = options.quick ? 12 : 40;
    nn::LMConfig cfg = nn::LMConfig::modern_lm();
    cfg.window = W;
    const std::vector<int64_t> prompt = farm::encode("<s> the dog");
    const int64_t total = static_cast<int64_t>(prompt.size()) + new_tokens;
    r.paragraph(
        "§6.4 An untrained ModernLM with W = {} continues \"{}\" by {} greedy tokens, one token per call, with a "
        "rolling buffer of W - 1 = {} slots per layer (position p in slot p mod {}): a window of W is the current "
        "token, whose k and v are computed fresh, and the W - 1 before it (the lecture's slot i mod W counts the "
        "current token's slot too). Then the whole sequence of {} "
        "tokens is read in one full forward pass with the same window. ({}; the model is untrained, so its tokens "
        "are noise: the identity holds for any weights.)",
        W, farm::decode(prompt), new_tokens, W - 1, W - 1, total, seeds_text(options));
    const std::vector<RotateBy> bugs{RotateBy::CacheLength, RotateBy::Slot};
    const RollingCacheCheck check = check_rolling_cache(cfg, prompt, new_tokens, bugs, options.seeds, kTolerance);
    const RollingCacheRun& seed0 = check.seeds[0];
    r.paragraph("seed 0 generated: {}. After the last token each layer's buffer holds positions {} only.",
                farm::decode(std::vector<int64_t>(seed0.ids.begin() + static_cast<std::ptrdiff_t>(prompt.size()),
                                                  seed0.ids.end())),
                fmt::join(seed0.held, ", "));
    std::vector<std::vector<Cell>> rows;
    for (size_t seed = 0; seed < check.seeds.size(); ++seed) {
        const RollingCacheRun& run = check.seeds[seed];
        rows.push_back({seed, "greedy", describe(RotateBy::AbsolutePosition), run.engine.max_diff,
                        first_wrong_cell(run.engine), run.engine.argmax_changed});
        for (size_t v = 0; v < bugs.size(); ++v)
            rows.push_back({seed, "teacher-forced", describe(bugs[v]), run.wrong[v].max_diff,
                            first_wrong_cell(run.wrong[v]), run.wrong[v].argmax_changed});
    }
    r.table(
        "rolling_cache",
        {"seed", "decoder", "RoPE angle from", "max |logits - full|", "first wrong position", "greedy token changed"},
        rows);
    r.value("slots_kept", static_cast<double>(check.most_slots));
    r.value("rolling_minus_full", check.engine_error);
    r.value("bug_cache_length_error", check.wrong_error[0]);
    r.value("bug_slot_error", check.wrong_error[1]);
    r.paragraph(
        "The buffer never holds more than {} positions, yet every logit equals the full pass to {}: the keys in it "
        "were rotated by their own positions, so their slot does not matter. Rotating the new token by the cache "
        "length is right only while the cache fills (p ≤ W - 1); from then on the logits are off by up to {} (by "
        "the slot: {}). With either bug the greedy token changed at {} of {} (position, bug) pairs{}",
        check.most_slots, Cell(check.engine_error).str(true), Cell(check.wrong_error[0]).str(),
        Cell(check.wrong_error[1]).str(), check.wrong_changed, check.wrong_positions,
        check.wrong_changed == 0 ? ": the text looks the same, which is how such a bug hides." : ".");
    r.claim({"buffer_keeps_w_minus_1", "After each step the rolling cache keeps only the last W - 1 = 5 positions.", 5,
             check.most_slots, check.most_slots == W - 1,
             fmt::format("each layer's buffer held at most {} positions over {} steps", check.most_slots, total),
             ClaimKind::check,
             fmt::format("The rolling buffer held at most {} positions per layer over {} steps, the lecture's "
                         "W - 1 = 5: {}.",
                         check.most_slots, total, outcome(check.most_slots == W - 1))});
    r.claim({"rolling_equals_full", "Decoding with the rolling buffer gives the same logits as the full forward pass.",
             1.7e-16, check.engine_error, check.engine_error < kTolerance,
             fmt::format("every logit of the {} positions equals the full pass to {}, {} the tolerance {}", total,
                         Cell(check.engine_error).str(true), check.engine_error < kTolerance ? "below" : "above",
                         Cell(kTolerance).str(true)),
             ClaimKind::check,
             fmt::format("Rolling-buffer logits equal the full pass to {} (the lecture's 1.7e-16), tolerance {}: {}.",
                         Cell(check.engine_error).str(true), Cell(kTolerance).str(true),
                         outcome(check.engine_error < kTolerance))});
    r.claim({"cache_length_rotation_wrong",
             "Rotating the new token by the cache length instead of its absolute position is wrong once the buffer "
             "is full.",
             6.9e-4, check.wrong_error[0], check.wrong_error[0] > kTolerance,
             fmt::format("right while the buffer fills, wrong from position {} on (seed 0), off by up to {}; the "
                         "size depends on the weights (the lecture's comes from its own model), the error does not "
                         "go away",
                         first_wrong_cell(seed0.wrong[0]).str(), Cell(check.wrong_error[0]).str()),
             ClaimKind::check,
             fmt::format("Rotating by the cache length puts the logits off by up to {} once the buffer is full (the "
                         "lecture's 6.9e-4): {}.",
                         Cell(check.wrong_error[0]).str(), outcome(check.wrong_error[0] > kTolerance))});
    r.takeaway(
        "a rolling buffer of W - 1 slots gives exactly the full result because RoPE keys carry their own "
        "position; the new token must be rotated by its absolute position, never by the cache length.");
}

// ---- part 5 ------------------------------------------------------------------

std::string window_name(int64_t W) { return W == 0 ? "full" : std::to_string(W); }

void part5_training(Report& r, const Options& options) {
    const WindowData data = window_data(options.quick, farm::Language::named(options.language));
    constexpr int64_t kMaxK = 6;
    r.paragraph(
        "§6.5 Two-layer ModernLMs (RoPE, 4 query / 2 KV heads), W = 2, 4, 8 and full attention, {} on {} "
        "farm sentences, {}. Agreement test: {} prefixes per k whose every attractor has the opposite number; the "
        "verb is predicted 3k tokens after the subject. A model of $L$ layers sees $L(W - 1)$ tokens back (part 3), "
        "here $2(W - 1)$.",
        count_of(data.training.epochs, "epoch"), data.train.size(), seeds_text(options), data.agreement[0].size());
    const std::vector<WindowRuns> results = train_windows(options, data, {2, 4, 8, 0});
    for (const WindowRuns& w : results)
        for (size_t seed = 0; seed < w.status.size(); ++seed)
            r.log(fmt::format("W = {}, seed {}: {}", window_name(w.window), seed, w.status[seed]));

    const auto mean = [](const std::vector<double>& v) {
        return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
    };
    std::vector<std::string> columns{"W", "receptive field 2(W-1)", "test perplexity"};
    for (int64_t k = 1; k <= kMaxK; ++k) columns.push_back(fmt::format("k={} (distance {})", k, 3 * k));
    const auto table = [&](const std::string& name, const std::function<double(const std::vector<double>&)>& reduce,
                           bool p_correct) {
        std::vector<std::vector<Cell>> rows;
        for (const WindowRuns& w : results) {
            std::vector<Cell> row{window_name(w.window), w.window == 0 ? Cell("all") : Cell(2 * (w.window - 1)),
                                  reduce(w.perplexity)};
            for (int64_t k = 1; k <= kMaxK; ++k) row.emplace_back(reduce(w.per_seed(k, p_correct)));
            rows.push_back(std::move(row));
        }
        r.table(name, columns, rows);
    };
    const auto minimum = [](const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); };
    r.paragraph("Agreement accuracy{}:", options.seeds > 1 ? " (mean over seeds)" : "");
    table("agreement", mean, false);
    if (options.seeds > 1) {
        r.paragraph("Minimum over seeds (perplexity: the best seed):");
        table("agreement_min", minimum, false);
    }
    r.paragraph("p(correct), the verb mass on the subject's number (0.5: cannot tell; below: follows the attractors):");
    table("p_correct", mean, true);
    r.paragraph("k = 1-3 lie within the training sentences; k = 4-6 are longer than any of them.");
    write_accuracy_by_distance(output_path(options, "04_accuracy_by_distance.svg"), results, kMaxK);
    r.figure("04_accuracy_by_distance.svg",
             "Each window finds the subject while it lies within its receptive field 2(W-1) and drops below "
             "chance beyond it; right of the dashed line every model is past its training lengths.");

    const auto result = [&](int64_t W, int64_t k, bool p_correct) {
        for (const WindowRuns& w : results)
            if (w.window == W) return mean(w.per_seed(k, p_correct));
        return std::numeric_limits<double>::quiet_NaN();
    };
    const auto text = [](double x) { return Cell(x).str(); };
    const double w4_distance_6 = result(4, 2, false), w4_distance_9 = result(4, 3, false),
                 w2_distance_3 = result(2, 1, false), full_distance_9 = result(0, 3, false);
    const double w4_p_distance_9 = result(4, 3, true), w2_p_distance_3 = result(2, 1, true);
    r.value("w4_accuracy_distance_6", w4_distance_6);
    r.value("w4_accuracy_distance_9", w4_distance_9);
    r.value("w2_accuracy_distance_3", w2_distance_3);
    r.value("full_accuracy_distance_9", full_distance_9);
    r.paragraph(
        "W = 4 scores {} at distance 6 (inside its field of 6) and {} at distance 9 (outside; p(correct) {}); full "
        "attention {} at distance 9. W = 2 scores {} at distance 3 (p(correct) {}).",
        text(w4_distance_6), text(w4_distance_9), text(w4_p_distance_9), text(full_distance_9), text(w2_distance_3),
        text(w2_p_distance_3));
    // Below chance the model follows the attractors, the nearest nouns; full
    // attention at the same distance tells whether the models learned agreement.
    const auto below_chance = [&](double accuracy, const std::string& field, int64_t k) {
        const double full = result(0, k, false);
        const std::string versus =
            full < 0.5 ? fmt::format(
                             "; full attention scores only {} there too: the models have not learned agreement "
                             "well enough to isolate the window",
                             text(full))
                       : fmt::format("; full attention scores {} at the same distance", text(full));
        return fmt::format("{} {} chance (0.5) at distance {}, beyond the field of {}{}", text(accuracy),
                           accuracy < 0.5 ? "is below" : "is not below", 3 * k, field, versus);
    };
    // Per seed: the window's accuracy at distance 3k and full attention's.
    const auto seeds_table = [&](int64_t W, int64_t k) {
        const auto runs = [&](int64_t window) {
            for (const WindowRuns& w : results)
                if (w.window == window) return w.per_seed(k, false);
            return std::vector<double>{};
        };
        const std::vector<double> windowed = runs(W), full = runs(0);
        Table t{"", {"seed", fmt::format("W = {} accuracy at distance {}", W, 3 * k), "full attention"}, {}};
        for (size_t seed = 0; seed < windowed.size(); ++seed) t.rows.push_back({seed, windowed[seed], full[seed]});
        return t;
    };
    const auto verdict = [&](int64_t W, int64_t k, double accuracy, const std::string& lecture) {
        return fmt::format("W = {} agreement at distance {}: {} against the lecture's {}, full attention {}: {}.", W,
                           3 * k, text(accuracy), lecture, text(result(0, k, false)),
                           accuracy < 0.5 ? "below chance, reproduced" : "not below chance, not reproduced");
    };
    r.claim({"w4_below_chance_at_distance_9",
             "With W = 4 (two layers reach 6 back) agreement collapses at distance 9 (k = 3): the subject is out of "
             "reach.",
             0.0, w4_distance_9, w4_distance_9 < 0.5, below_chance(w4_distance_9, "6", 3), ClaimKind::experiment,
             verdict(4, 3, w4_distance_9, "0"), seeds_table(4, 3)});
    r.claim({"w2_below_chance_at_distance_3",
             "With W = 2 (two layers reach 2 back) agreement already fails at distance 3 (k = 1).", "", w2_distance_3,
             w2_distance_3 < 0.5, below_chance(w2_distance_3, "2", 1), ClaimKind::experiment,
             verdict(2, 1, w2_distance_3, "failure"), seeds_table(2, 1)});
    r.paragraph(
        "W = 8 at distance 12 is inside its field of 14 but farther than in any training sentence: {} (full "
        "attention: {}). Beyond the training distances RoPE models extrapolate poorly whatever the window (§7.3), "
        "so only k = 1-3 isolate the window's effect.",
        text(result(8, 4, false)), text(result(0, 4, false)));
    r.takeaway(
        "a subject farther back than the receptive field $L(W - 1)$ cannot be seen, and agreement fails beyond it "
        "(beyond the training distances every model fails anyway, whatever its window). Windows trade long-range "
        "paths for $O(T \\cdot W)$ cost, which is why models interleave them with global layers.");
}

}  // namespace

const Lesson& lesson() {
    static const Lesson window{
        "04_sliding_window",
        "Sliding-window attention",
        "§6 Sliding window attention · 滑动窗口注意力",
        1,
        {{"§6.1",
          "The masks of the slides",
          "The slides' w = 4 and w = 6 are causal windows of W = 3 and 4 tokens; the engine's mask, printed.",
          part1_masks,
          {"lessons/sliding_window/implementations.cpp"}},
         {"§6.2",
          "Three implementations and their cost",
          "Naive (full matrix + mask), for loop and sliding chunks give the engine's output; fitted to median "
          "times, the naive one grows as T², the chunked one as T·W.",
          part2_implementations,
          {"lessons/sliding_window/implementations.cpp", "lessons/sliding_window/implementation_check.cpp"}},
         {"§6.3",
          "Receptive field of stacked windows",
          "Changing token 1 moves layer L's outputs exactly L(W-1) positions to the right (W = 4).",
          part3_receptive_field,
          {"lessons/sliding_window/receptive_field.cpp"}},
         {"§6.4",
          "The rolling buffer cache",
          "Decoding 40 tokens with W - 1 = 5 cached positions equals the full pass; rotating by the cache "
          "length does not.",
          part4_rolling_cache,
          {"lessons/sliding_window/rolling_cache.cpp"}},
         {"§6.5",
          "What a small window costs",
          "Two-layer ModernLMs with W = 2, 4, 8 and full attention: agreement fails once the subject is "
          "beyond 2(W-1).",
          part5_training,
          {"lessons/sliding_window/small_windows.cpp"}}},
        {},
        FarmLanguage::used};
    return window;
}

}  // namespace lessons::sliding_window
