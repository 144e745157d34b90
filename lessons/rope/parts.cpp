#include "lessons/rope/parts.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <string_view>
#include <utility>

#include "data/farm_language.h"
#include "lessons/common/progress.h"
#include "lessons/common/svg.h"
#include "lessons/rope/kv_cache.h"
#include "lessons/rope/long_range_decay.h"
#include "lessons/rope/pairing_swap.h"
#include "lessons/rope/rotation.h"
#include "lessons/rope/scores.h"

namespace lessons::rope {
namespace {

constexpr int64_t kDim = 64;  // §4.5's d = 64, the head size of parts 1-4
constexpr double kTolerance = 1e-12;

// A finding that holds to floating-point precision: reproduced when `error`
// (ours) is below kTolerance; the reason reads "<what> <error>, rounding …".
Claim rounding_claim(std::string key, std::string statement, Cell lecture, double error, std::string_view what) {
    return {
        std::move(key),
        std::move(statement),
        std::move(lecture),
        error,
        error < kTolerance,
        fmt::format("{} {}, rounding level (tolerance {})", what, Cell(error).str(true), Cell(kTolerance).str(true))};
}

// ---- part 1 ------------------------------------------------------------------

void part1_three_forms(Report& r, const Options& options) {
    const auto theta = frequencies(kDim);
    const ag::Tensor R5 = rotation_matrix(5, kDim);
    constexpr int64_t shown = 6;
    r.paragraph(
        "§4.2 R_{{Θ,m}} is block-diagonal: d/2 = {} blocks of 2×2, block i turning by m θ_i with "
        "θ_i = 10000^(-2(i-1)/d): θ_1 = {}, θ_2 = {}, θ_3 = {}, …, θ_{} = {}.",
        kDim / 2, Cell(theta[0]).str(), Cell(theta[1]).str(), Cell(theta[2]).str(), kDim / 2, Cell(theta.back()).str());
    r.paragraph("The top-left {}×{} corner of R_{{Θ,5}} (d = {}; zero outside the 2×2 blocks):", shown, shown, kDim);
    std::vector<std::string> columns{"row"};
    for (int64_t j = 1; j <= shown; ++j) columns.push_back(std::to_string(j));
    std::vector<std::vector<Cell>> rows;
    for (int64_t i = 0; i < shown; ++i) {
        std::vector<Cell> row{i + 1};
        for (int64_t j = 0; j < shown; ++j) row.emplace_back(R5.at({i, j}));
        rows.push_back(std::move(row));
    }
    r.table("R5_top_left", columns, rows);

    // The same vectors at positions 0 … n-1, rotated every way.
    const int64_t n = options.quick ? 16 : 1024;
    const FormErrors worst = forms_against_full_matrix(n, kDim, options.seeds);
    r.paragraph(
        "{} vectors x ~ N(0, 1) of size {} at positions 0 … {} ({}), rotated by the full matrix (the "
        "definition) and by the O(d) forms. The half-split forms pair dimension i with i + d/2, so they get x "
        "with its dimensions permuted (2i → i, 2i+1 → i + d/2) and their output is permuted back:",
        n, kDim, n - 1, options.seeds == 1 ? "seed 0" : fmt::format("seeds 0 … {}", options.seeds - 1));
    r.table("forms", {"form", "pairs", "input", "max |· - full matrix|"},
            {{"element-wise (slides)", "(2i, 2i+1)", "x", worst.elementwise},
             {"ag::rope Interleaved (RoFormer)", "(2i, 2i+1)", "x", worst.engine_interleaved},
             {"matrix form §4.6", "(i, i+d/2)", "permuted x", worst.matrix_form},
             {"ag::rope Half (Llama, GPT-NeoX)", "(i, i+d/2)", "permuted x", worst.engine_half},
             {"matrix form §4.6", "(i, i+d/2)", "x, not permuted", worst.unpermuted}});
    r.value("elementwise_minus_full", worst.elementwise);
    r.value("engine_interleaved_minus_full", worst.engine_interleaved);
    r.value("matrix_form_minus_full", worst.matrix_form);
    r.value("engine_half_minus_full", worst.engine_half);
    r.value("unpermuted_matrix_form_minus_full", worst.unpermuted);
    const double forms_worst =
        std::max({worst.elementwise, worst.engine_interleaved, worst.matrix_form, worst.engine_half});
    r.claim(rounding_claim("forms_agree",
                           "the full matrix, the slides' element-wise form and the §4.6 matrix form (after permuting "
                           "the dimensions) give one rotation, and so does the engine's ag::rope",
                           "", forms_worst, "the four forms differ from the full matrix by at most"));
    r.paragraph(
        "The last row is the warning of §4.6: the two pairings are different conventions, equal only after the "
        "permutation.");
    r.claim({"pairings_differ_unpermuted",
             "the (2i, 2i+1) and (i, i+d/2) pairings are different conventions: equal only after permuting the "
             "dimensions, so a checkpoint must be loaded with the pairing it was trained with",
             "", worst.unpermuted, worst.unpermuted > 0.1,
             fmt::format("without the permutation the matrix form misses the full matrix by {}, with it by {}",
                         Cell(worst.unpermuted).str(), Cell(worst.matrix_form).str(true))});
    r.paragraph(
        "Cost per vector: the full matrix {} multiply-adds (d²), the O(d) forms {} multiplications and {} "
        "additions.",
        kDim * kDim, 2 * kDim, kDim);
    r.takeaway(
        "the full matrix, the slides' element-wise form and the §4.6 matrix form are one rotation; "
        "RoFormer's (2i, 2i+1) and Llama's (i, i+d/2) pairings differ by a fixed permutation of "
        "dimensions, so a checkpoint must be loaded with the pairing it was trained with.");
}

// ---- part 2 ------------------------------------------------------------------

const std::vector<Placement> kSamePairs{{5, 2}, {105, 102}, {1005, 1002}};

void part2_relative(Report& r, const Options& options) {
    const Scores s = scores(kSamePairs, options.seeds, kDim);
    const IdentityErrors identity = relative_rotation_errors(kSamePairs, kDim);

    r.paragraph(
        "§4.4 One query q and one key k (entries N(0, 1), d = {}) placed at three (t, j) with the same distance "
        "t - j = 3. Score = k̃_jᵀ q̃_t = (R_j k)ᵀ (R_t q) (the 1/√d_k factor is left out: it scales every score "
        "alike).",
        kDim);
    std::vector<std::vector<Cell>> rows;
    for (const PlacedScores& p : s.rows)
        rows.push_back({p.seed, p.t, p.j, p.t - p.j, p.rope, p.relative, p.rope - p.relative});
    for (size_t first = 0; first < s.rows.size(); first += kSamePairs.size())  // one seed's three placements
        r.paragraph("Seed {}: scores {:+.12f}, {:+.12f}, {:+.12f}.", s.rows[first].seed, s.rows[first].rope,
                    s.rows[first + 1].rope, s.rows[first + 2].rope);
    r.table("scores", {"seed", "t", "j", "t - j", "(R_j k)ᵀ(R_t q)", "kᵀ R_{t-j} q", "difference"}, rows);
    r.value("score_spread", s.rope_range);
    r.value("relative_form_error", s.relative_error);
    Claim scores_equal = rounding_claim(
        "scores_equal",
        "one q, k pair placed at (5, 2), (105, 102) and (1005, 1002) gets one score: it depends only on t - j",
        "spread 0: +1.685028392114 three times", s.rope_range, "the three scores of a seed differ by at most");
    scores_equal.reason += "; the lecture's q and k are its own, so the equality compares, not the score";
    r.claim(std::move(scores_equal));

    r.paragraph("Why: R_jᵀ R_t = R_{t-j} (turn by t, then back by j). The identity, entry by entry:");
    rows.clear();
    for (size_t i = 0; i < kSamePairs.size(); ++i)
        rows.push_back({kSamePairs[i].first, kSamePairs[i].second, identity.errors[i]});
    r.table("identity", {"t", "j", "max |R_jᵀ R_t - R_{t-j}|"}, rows);
    r.value("identity_error", identity.worst);
    r.claim(rounding_claim("identity_holds", "R_jᵀ R_t = R_{t-j}, to rounding", 9.5e-15, identity.worst,
                           "the largest entry error is"));
    r.takeaway(
        "rotating q and k by their own absolute positions makes the score depend only on t - j: "
        "the absolute positions cancel in R_jᵀ R_t = R_{t-j}.");
}

// ---- part 3 ------------------------------------------------------------------

void part3_wrong_version(Report& r, const Options& options) {
    const Scores s = scores({{5, 2}, {12, 2}, {42, 2}, {1005, 1002}, {1002, 2}}, options.seeds, kDim);
    r.paragraph(
        "§4.3 The slides' version marked \"wrong\": q_t and k_j both rotated by R_{Θ,t-j}. Against RoPE (q by "
        "R_t, k by R_j) and against no rotation at all, same q and k as part 2:");
    std::vector<std::vector<Cell>> rows;
    for (const PlacedScores& p : s.rows)
        rows.push_back({p.seed, p.t, p.j, p.t - p.j, p.rope, p.wrong, p.plain, std::fabs(p.wrong - p.plain)});
    r.table("wrong_version",
            {"seed", "t", "j", "t - j", "RoPE", "wrong: both R_{t-j}", "kᵀq (no rotation)", "|wrong - kᵀq|"}, rows);
    r.value("wrong_minus_no_rotation", s.wrong_minus_plain);
    r.value("rope_score_range", s.rope_range);
    r.value("wrong_score_range", s.wrong_range);
    r.claim(rounding_claim("wrong_equals_no_rotation",
                           "rotating both q and k by R_{t-j} (the slides' \"wrong\" version) gives the unrotated "
                           "score kᵀq: the positions cancel",
                           "1e-15 order", s.wrong_minus_plain, "|wrong - kᵀq| is at most"));
    r.paragraph(
        "(R_m k)ᵀ (R_m q) = kᵀ R_mᵀ R_m q = kᵀ q because a rotation is orthogonal (R_mᵀ R_m = I, exercise 7): "
        "whatever m is, the rotation cancels. Across these distances the RoPE scores span {}, the wrong "
        "version's {}: it carries no position at all.",
        Cell(s.rope_range).str(), Cell(s.wrong_range).str());
    r.takeaway(
        "each vector must be turned by its OWN position; turning both by t - j cancels in the dot "
        "product and the model learns nothing about position.");
}

// ---- part 4 ------------------------------------------------------------------

// "m_1 → m_2 → …": RoPE's mean |similarity| decade by decade.
std::string decade_means(const std::vector<Decade>& decades) {
    std::string means;
    for (const Decade& d : decades) means += (means.empty() ? "" : " → ") + Cell(d.mean_abs).str();
    return means;
}

void part4_frequencies(Report& r, const Options& options) {
    // Norms, on the engine's rotation, positions 0 … n-1.
    const int64_t n = options.quick ? 64 : 4096;
    const double length_change = norm_change(n, kDim);
    r.paragraph(
        "§4.5 question 1: a rotation keeps lengths. {} vectors x ~ N(0, 1) at positions 0 … {}: "
        "max | ‖R_m x‖ - ‖x‖ | = {}. Position changes the direction of q and k, never how large they are.",
        n, n - 1, Cell(length_change).str(true));
    r.value("norm_change", length_change);
    r.claim(rounding_claim("norms_kept", "a rotation keeps the length of every vector", 1.8e-15, length_change,
                           "max | ‖R_m x‖ - ‖x‖ | is"));

    // Similarity against distance, one frequency against RoPE's geometric
    // frequencies.
    const int64_t max_delta = options.quick ? 999 : 9999;
    constexpr int64_t search = 100;
    const FrequencyComparison c = compare_frequencies(max_delta, search, kDim);
    const int64_t alias = c.alias;
    const auto at = [](const std::vector<double>& s, int64_t delta) { return s[static_cast<size_t>(delta)]; };

    r.paragraph(
        "§4.5 question 2: similarity of two positions Δ apart = (R_Δ u)ᵀ(R_0 u) for a unit vector u with equal "
        "weight on every pair = the mean over pairs of cos(Δ θ_i). d = {}:",
        kDim);
    std::vector<int64_t> deltas{0, 1, 2, 3, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000};
    deltas.push_back(alias);
    std::sort(deltas.begin(), deltas.end());
    deltas.erase(std::unique(deltas.begin(), deltas.end()), deltas.end());
    std::vector<std::vector<Cell>> rows;
    for (const int64_t delta : deltas)
        if (delta <= max_delta) rows.push_back({delta, at(c.one, delta), at(c.geometric, delta)});
    r.table("similarity", {"Δ", "one frequency θ = 1", "RoPE θ_i = 10000^(-2(i-1)/d)"}, rows);
    const double turns = static_cast<double>(alias) / (2.0 * M_PI);
    r.paragraph(
        "With one frequency the most similar distance in 1 … {} is Δ = {} ({:.3f} turns): similarity {}, as if "
        "the two tokens were at the same position. RoPE at Δ = {}: {}.",
        search, alias, turns, Cell(at(c.one, alias)).str(), alias, Cell(at(c.geometric, alias)).str());
    r.value("one_frequency_alias_distance", static_cast<double>(alias));
    r.value("one_frequency_similarity_at_alias", at(c.one, alias));
    r.value("rope_similarity_at_alias", at(c.geometric, alias));
    r.claim({"one_frequency_aliases",
             "with one frequency for every pair, Δ = 44 (about 7 turns) looks exactly like Δ = 0", 44,
             static_cast<double>(alias), alias == 44,
             fmt::format("the most similar distance in 1 … {} is Δ = {} ({:.3f} turns, similarity {}); RoPE's "
                         "geometric frequencies give {} there",
                         search, alias, turns, Cell(at(c.one, alias)).str(), Cell(at(c.geometric, alias)).str())});

    // Long-range decay: |similarity| per decade of distance.
    rows.clear();
    for (size_t b = 0; b < c.rope_decades.size(); ++b) {
        const Decade &one = c.one_decades[b], &rope = c.rope_decades[b];
        rows.push_back(
            {fmt::format("{} … {}", one.first, one.last), one.max_abs, one.mean_abs, rope.max_abs, rope.mean_abs});
    }
    r.paragraph("Per decade of distance (long-range decay, RoFormer):");
    r.table("decay", {"Δ", "one freq.: max |sim|", "mean |sim|", "RoPE: max |sim|", "mean |sim|"}, rows);
    r.claim({"rope_mean_similarity_decays",
             "with RoPE's geometric frequencies the similarity of two positions shrinks with their distance "
             "(long-range decay)",
             "", decade_means(c.rope_decades), c.rope_decays,
             c.rope_decays ? "RoPE's mean |similarity| falls from each decade of distance to the next"
                           : "RoPE's mean |similarity| does not fall from every decade of distance to the next"});
    const auto theta = frequencies(kDim);
    const double fastest_period = 2 * M_PI / theta.front(), slowest_period = 2 * M_PI / theta.back();
    r.paragraph(
        "The fastest pair turns {} rad per position (period {} positions), the slowest {} (period {}): like the "
        "hands of a clock, together they tell positions apart over a long range.",
        Cell(theta.front()).str(), Cell(fastest_period).str(), Cell(theta.back()).str(), Cell(slowest_period).str());
    r.claim({"fastest_period", "the fastest pair turns 1 rad per position: a period of 6.3 positions", 6.3,
             fastest_period, std::fabs(fastest_period - 6.3) < 0.05, "2π/θ_1 = 2π, 6.3 to one decimal"});
    r.claim({"slowest_period", "the slowest pair's period is about 47,000 positions", "about 4.7e4", slowest_period,
             std::fabs(slowest_period - 4.7e4) < 0.05e4,
             fmt::format("2π/θ_{} = 2π · 10000^({}/{}) = {}, 4.7e4 to two digits", kDim / 2, kDim - 2, kDim,
                         Cell(slowest_period).str())});

    svg::LinePlot plot{"Similarity of two positions Δ apart (d = 64)", "distance Δ", "(R_Δ u)ᵀ u"};
    constexpr int64_t plotted = 200;
    std::vector<double> xs, one_y, rope_y;
    for (int64_t delta = 0; delta <= plotted; ++delta) {
        xs.push_back(static_cast<double>(delta));
        one_y.push_back(at(c.one, delta));
        rope_y.push_back(at(c.geometric, delta));
    }
    plot.series.push_back({"one frequency θ = 1", xs, one_y});
    plot.series.push_back({"RoPE, geometric θ_i", xs, rope_y});
    const auto path = output_path(options, "02_similarity.svg");
    svg::write(path, plot);
    r.figure("02_similarity.svg",
             fmt::format("similarity of two positions Δ = 0 … {} apart: one frequency against RoPE's", plotted));
    r.takeaway(
        fmt::format("one frequency repeats every 2π/θ positions (Δ = {} looks like Δ = 0); RoPE's "
                    "geometric frequencies never line up again within the range and the similarity "
                    "decays with distance.",
                    alias));
}

// ---- part 5 ------------------------------------------------------------------

void part5_kv_cache(Report& r, const Options& options) {
    const int64_t T = options.quick ? 12 : 40;
    const CachedDecoding decoding = decode_with_cache(T, options.seeds, farm::Language::named(options.language));
    const std::vector<int64_t> shown{0, 1, 2, 3, 5, 10, 20, 30, 39};
    r.paragraph(
        "§4.7 An untrained ModernLM (RoPE, d = 64, 2 layers, 4 query / 2 KV heads; the identity holds for any "
        "weights) reads {} tokens of farm sentences twice: all at once (forward), and one token per call at its "
        "absolute position with a KV cache (forward_cached). Each key is rotated once, by its own position, when "
        "it enters the cache, and never touched again.",
        T);
    std::vector<std::vector<Cell>> rows;
    for (const DecodingStep& s : decoding.steps)
        if (std::find(shown.begin(), shown.end(), s.position) != shown.end())
            rows.push_back({s.seed, s.position, std::string(farm::token(s.token)), s.cached_keys, s.max_diff});
    r.table("decoding", {"seed", "position", "token", "cached keys", "max |cached - full| logits"}, rows);
    r.value("max_cached_minus_full", decoding.worst);
    Claim cached =
        rounding_claim("cached_equals_full",
                       "decoding token by token with a cache of rotated keys gives the logits of the full forward pass",
                       1.7e-16, decoding.worst, "the largest difference over every position is");
    if (decoding.worst == 0.0)
        cached.reason =
            "ours is 0, bit for bit: each query sees the same keys, rotated by the same angles, in the "
            "same order";
    r.claim(std::move(cached));
    r.takeaway(
        "a key rotated by its own absolute position stays valid forever: RoPE and the KV cache "
        "work together, a new token only rotates its own q and k.");
}

// ---- part 6 ------------------------------------------------------------------

std::string pairing_name(ag::RopePairing p) {
    return p == ag::RopePairing::Half ? "half (i, i + d_h/2)" : "interleaved (2i, 2i+1)";
}

void part6_pairings(Report& r, const Options& options) {
    const PairingSwap swap = swap_pairings(options);
    r.paragraph(
        "§9 pitfall 4: \"the two RoPE implementations (adjacent pairs / first and second half) are different.\" "
        "They are the same rotation after a permutation of each head's dimensions (part 1), but a checkpoint must "
        "be run with the pairing it was trained with. Two models that differ only in their pairing: {}.",
        swap.training);
    std::vector<std::vector<Cell>> rows;
    for (const PairingRun& run : swap.runs) {
        r.paragraph("The model trained with the {} pairing (d_h: a head's size): checkpoint {}",
                    pairing_name(run.trained), run.status);
        rows.push_back({pairing_name(run.trained), run.right, run.wrong, run.permuted});
    }
    r.table("pairing_swap",
            {"trained with", "test ppl, its own pairing", "the other pairing", "the other, W_q W_k rows permuted"},
            rows);
    r.paragraph("On {} test sentences; the farm grammar's own perplexity, the floor under any model, is {}.",
                group_thousands(static_cast<double>(swap.test_sentences)), Cell(swap.grammar_perplexity).str());
    const PairingRun& half = swap.runs[0];
    const PairingRun& interleaved = swap.runs[1];
    r.value("ppl_half_right", half.right);
    r.value("ppl_half_wrong", half.wrong);
    r.value("ppl_interleaved_right", interleaved.right);
    r.value("ppl_interleaved_wrong", interleaved.wrong);
    const bool both_worse = half.wrong > half.right && interleaved.wrong > interleaved.right;
    r.claim(
        {"wrong_pairing_breaks_a_checkpoint",
         "A checkpoint run with the other RoPE pairing than it was trained with is a different, worse model.", "",
         fmt::format("ppl {} -> {} (half), {} -> {} (interleaved)", Cell(half.right).str(), Cell(half.wrong).str(),
                     Cell(interleaved.right).str(), Cell(interleaved.wrong).str()),
         both_worse,
         fmt::format("the wrong pairing multiplies the test perplexity by {:.2f} (trained half) and {:.2f} "
                     "(trained interleaved){}",
                     half.wrong / half.right, interleaved.wrong / interleaved.right,
                     both_worse      ? ""
                     : options.quick ? ": not worse in both (--quick: a small model trained briefly has learned little "
                                       "that depends on positions)"
                                     : ": not worse in both, so the model did not depend on its pairing")});
    double worst = 0;
    for (const PairingRun& run : swap.runs) worst = std::max(worst, std::abs(run.permuted - run.right) / run.right);
    constexpr double kSame = 1e-9;
    r.claim({"pairings_equivalent_after_permutation",
             "The two pairings are mathematically equivalent: permute each head's rows of W_q and W_k and the other "
             "pairing computes the same model.",
             "", worst, worst < kSame,
             fmt::format("relative perplexity difference {} after the permutation (rounding level below {}); "
                         "the models trained with either pairing reach {} and {}",
                         Cell(worst).str(true), Cell(kSame).str(true), Cell(half.right).str(),
                         Cell(interleaved.right).str())});
    r.takeaway(fmt::format(
        "the pairings are one rotation in two orders: a checkpoint run with the wrong one goes from ppl {} to {}, "
        "permuting W_q and W_k's rows restores it exactly; load weights with the pairing they were trained with.",
        Cell(half.right).str(), Cell(half.wrong).str()));
}

}  // namespace

const Lesson& lesson() {
    static const Lesson rope{
        "02_rope",
        "Rotary position embeddings (RoPE)",
        "§4 RoPE · 旋转位置编码",
        1,
        {{"§4.2", "R_{Θ,m} and three ways to apply it",
          "The full block-diagonal matrix, the slides' element-wise form and the §4.6 matrix form "
          "(half-split pairing, after a permutation) rotate alike, and so does ag::rope.",
          part1_three_forms},
         {"§4.4", "Scores depend only on t - j",
          "One q, k pair at (5,2), (105,102), (1005,1002) gets one score; R_jᵀ R_t = R_{t-j}.", part2_relative},
         {"§4.3", "The slides' \"wrong\" version",
          "Rotating both q and k by t - j gives exactly the unrotated score kᵀq.", part3_wrong_version},
         {"§4.5", "Why 2-D blocks, why many frequencies",
          "Rotations keep norms; with one frequency Δ = 44 looks like Δ = 0, RoPE's geometric "
          "frequencies decay with distance.",
          part4_frequencies},
         {"§4.7", "RoPE and the KV cache",
          "Decoding token by token with a cache of rotated keys equals the full forward pass.", part5_kv_cache},
         {"§9", "Pitfall 4: the two pairings on a trained model",
          "A ModernLM trained with one pairing and run with the other loses its quality; permuting W_q and W_k's "
          "rows per head makes the other pairing compute the same model.",
          part6_pairings}},
        {},
        FarmLanguage::used};
    return rope;
}

}  // namespace lessons::rope
