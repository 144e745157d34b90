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
#include "lessons/rope/rotate_values.h"
#include "lessons/rope/rotation.h"
#include "lessons/rope/scores.h"

namespace lessons::rope {
namespace {

constexpr int64_t kDim = 64;  // §4.5's d = 64, the head size of parts 1-4
constexpr double kTolerance = 1e-12;

// x for the page: a formula 4.4 × 10⁻¹⁶ (two digits) when it is tiny or
// huge, else as a table prints it; 0 as "0".
std::string readable(double x) {
    if (x == 0) return "0";
    const double magnitude = std::fabs(x);
    if (magnitude >= 1e-3 && magnitude < 1e6) return Cell(x).str();
    int exponent = static_cast<int>(std::floor(std::log10(magnitude)));
    double mantissa = x / std::pow(10.0, exponent);
    if (std::fabs(mantissa) >= 9.95) mantissa /= 10, ++exponent;  // 9.96 prints as 1.0 × 10 more
    return fmt::format("${:.1f} \\times 10^{{{}}}$", mantissa, exponent);
}

// "seed 0" or "seeds 0 … 2".
std::string seeds_drawn(int seeds) { return seeds == 1 ? "seed 0" : fmt::format("seeds 0 … {}", seeds - 1); }

// A finding that holds to floating-point precision: reproduced when `error`
// (ours) is below kTolerance.
Claim rounding_claim(std::string key, std::string statement, Cell lecture, double error, std::string verdict) {
    return {std::move(key),
            std::move(statement),
            std::move(lecture),
            error,
            error < kTolerance,
            fmt::format("reproduced when below {} (rounding level): ours is {}", readable(kTolerance), readable(error)),
            ClaimKind::check,
            std::move(verdict)};
}

// The per-seed figures behind a claim over seeds, when there are several.
Table per_seed(const std::string& what, const std::vector<double>& values) {
    if (values.size() < 2) return {};
    Table t{"", {"seed", what}, {}};
    for (size_t seed = 0; seed < values.size(); ++seed) t.rows.push_back({seed, values[seed]});
    return t;
}

// ---- part 1 ------------------------------------------------------------------

void part1_three_forms(Report& r, const Options& options) {
    const auto theta = frequencies(kDim);
    const ag::Tensor R5 = rotation_matrix(5, kDim);
    constexpr int64_t shown = 6;
    r.paragraph(
        "§4.2 Standard attention scores $s_{t,j} = k_j^\\top q_t / \\sqrt{d_k}$. RoPE first turns every query and "
        "key by its own absolute position: $\\hat{q}_t = R_{\\Theta,t}\\, q_t$, $\\hat{k}_j = R_{\\Theta,j}\\, k_j$, "
        "$s_{t,j} = \\hat{k}_j^\\top \\hat{q}_t / \\sqrt{d_k}$.");
    r.paragraph(
        "{}",
        fmt::format(
            "$R_{{\\Theta,m}}$ is block-diagonal: $d/2 = {}$ blocks of 2×2, block $i$ the rotation by $m\\theta_i$ of "
            "the pair of dimensions $(2i-1, 2i)$, "
            "$$(x_{{2i-1}}, x_{{2i}}) \\to (x_{{2i-1}} \\mathrm{{cos}}\\, m\\theta_i - x_{{2i}} "
            "\\mathrm{{sin}}\\, m\\theta_i ,\\quad x_{{2i-1}} \\mathrm{{sin}}\\, m\\theta_i + x_{{2i}} "
            "\\mathrm{{cos}}\\, "
            "m\\theta_i)$$ "
            "with $\\theta_i = 10000^{{-2(i-1)/d}}$, $i = 1, \\ldots, d/2$: $\\theta_1 = {}$, $\\theta_2 = {}$, "
            "$\\theta_3 = {}$, …, $\\theta_{{{}}} = 10000^{{-{}/{}}} = {}$.",
            kDim / 2, Cell(theta[0]).str(), Cell(theta[1]).str(), Cell(theta[2]).str(), kDim / 2, kDim - 2, kDim,
            Cell(theta.back()).str()));
    r.paragraph("{}",
                fmt::format("The top-left {}×{} corner of $R_{{\\Theta,5}}$ ($d = {}$; zero outside the 2×2 blocks):",
                            shown, shown, kDim));
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
    const std::vector<FormErrors> errors = forms_against_full_matrix(n, kDim, options.seeds);
    FormErrors worst;
    std::vector<double> seed_worst;
    for (const FormErrors& e : errors) {
        worst.elementwise = std::max(worst.elementwise, e.elementwise);
        worst.engine_interleaved = std::max(worst.engine_interleaved, e.engine_interleaved);
        worst.matrix_form = std::max(worst.matrix_form, e.matrix_form);
        worst.engine_half = std::max(worst.engine_half, e.engine_half);
        worst.unpermuted = std::max(worst.unpermuted, e.unpermuted);
        seed_worst.push_back(std::max({e.elementwise, e.engine_interleaved, e.matrix_form, e.engine_half}));
    }
    r.paragraph(
        "The slides' element-wise form, $O(d)$ per vector: "
        "$$R_{\\Theta,m}\\, x = x \\odot (\\mathrm{cos}\\, m\\theta_1, \\mathrm{cos}\\, m\\theta_1, "
        "\\mathrm{cos}\\, m\\theta_2, \\mathrm{cos}\\, m\\theta_2, \\ldots) + (-x_2, x_1, -x_4, x_3, "
        "\\ldots) \\odot (\\mathrm{sin}\\, m\\theta_1, \\mathrm{sin}\\, m\\theta_1, \\mathrm{sin}\\, "
        "m\\theta_2, \\mathrm{sin}\\, m\\theta_2, \\ldots)$$");
    r.paragraph(
        "§4.6's matrix form, all $N$ positions at once: row $m$ of the angle matrix $C$ ($N \\times d$) is "
        "$m\\theta_1, \\ldots, m\\theta_{d/2}, m\\theta_1, \\ldots, m\\theta_{d/2}$, and "
        "$$Y_{\\mathrm{rot}} = Y \\odot \\mathrm{cos}\\, C + Y' \\odot \\mathrm{sin}\\, C, \\quad Y' = ["
        "-Y_{:, d/2+1 \\ldots d},\\, Y_{:, 1 \\ldots d/2}]$$ "
        "It pairs dimension $i$ with $i + d/2$ instead of $2i-1$ with $2i$.");
    r.paragraph(
        "{}",
        fmt::format(
            "{} vectors $x$ drawn from $N(0, 1)$ of size {} at positions 0 … {} ({}), rotated by the full matrix (the "
            "definition) and by the $O(d)$ forms. The half-split forms get $x$ with its dimensions permuted "
            "($2i-1 \\to i$, $2i \\to i + d/2$) and their output is permuted back:",
            n, kDim, n - 1, seeds_drawn(options.seeds)));
    r.table("forms", {"form", "pairs", "input", "largest difference from the full matrix"},
            {{"element-wise (slides)", "(2i−1, 2i)", "x", worst.elementwise},
             {"ag::rope, interleaved (RoFormer)", "(2i−1, 2i)", "x", worst.engine_interleaved},
             {"matrix form §4.6", "(i, i + d/2)", "permuted x", worst.matrix_form},
             {"ag::rope, half (Llama, GPT-NeoX)", "(i, i + d/2)", "permuted x", worst.engine_half},
             {"matrix form §4.6", "(i, i + d/2)", "x, not permuted", worst.unpermuted}});
    r.value("elementwise_minus_full", worst.elementwise);
    r.value("engine_interleaved_minus_full", worst.engine_interleaved);
    r.value("matrix_form_minus_full", worst.matrix_form);
    r.value("engine_half_minus_full", worst.engine_half);
    r.value("unpermuted_matrix_form_minus_full", worst.unpermuted);
    const double forms_worst =
        std::max({worst.elementwise, worst.engine_interleaved, worst.matrix_form, worst.engine_half});
    Claim forms = rounding_claim(
        "forms_agree",
        "the full matrix, the slides' element-wise form and the §4.6 matrix form (after permuting the dimensions) "
        "give one rotation, and so does the engine's `ag::rope`",
        "one result", forms_worst,
        fmt::format("The element-wise form, the §4.6 matrix form and `ag::rope` match the full rotation matrix to {}: "
                    "{}",
                    readable(forms_worst),
                    forms_worst < kTolerance ? "one rotation, as the lecture says."
                                             : "more than rounding, so not one rotation."));
    forms.evidence = per_seed("largest difference", seed_worst);
    r.claim(std::move(forms));
    r.paragraph(
        "The last row is the warning of §4.6: the two pairings are different conventions, equal only after the "
        "permutation.");
    const bool differ = worst.unpermuted > 0.1;
    r.claim({"pairings_differ_unpermuted",
             "the (2i−1, 2i) and (i, i + d/2) pairings are different conventions: equal only after permuting the "
             "dimensions, so a checkpoint must be loaded with the pairing it was trained with",
             "", worst.unpermuted, differ,
             fmt::format("reproduced when the unpermuted matrix form misses the full matrix by more than 0.1: it "
                         "misses by {}, the permuted one by {}",
                         readable(worst.unpermuted), readable(worst.matrix_form)),
             ClaimKind::check,
             fmt::format("Without the permutation the §4.6 matrix form misses the full matrix by {}, with it by {}: "
                         "{}",
                         readable(worst.unpermuted), readable(worst.matrix_form),
                         differ ? "two conventions, as the lecture warns." : "the pairings do not differ here.")});
    r.paragraph(
        "Cost per vector: the full matrix {} multiply-adds ($d^2$), the $O(d)$ forms {} multiplications and {} "
        "additions.",
        kDim * kDim, 2 * kDim, kDim);
    r.takeaway(
        "the full matrix, the slides' element-wise form and the §4.6 matrix form are one rotation; "
        "RoFormer's (2i−1, 2i) and Llama's (i, i + d/2) pairings differ by a fixed permutation of "
        "dimensions, so a checkpoint must be loaded with the pairing it was trained with.");
}

// ---- part 2 ------------------------------------------------------------------

const std::vector<Placement> kSamePairs{{5, 2}, {105, 102}, {1005, 1002}};

// The largest spread (max - min) over one seed's placements of score(row),
// for each seed: s.rows holds `placements` rows per seed.
std::vector<double> spread_per_seed(const Scores& s, size_t placements, double (*score)(const PlacedScores&)) {
    std::vector<double> spreads;
    for (size_t first = 0; first < s.rows.size(); first += placements) {
        double lo = score(s.rows[first]), hi = lo;
        for (size_t i = first; i < first + placements; ++i) {
            lo = std::min(lo, score(s.rows[i]));
            hi = std::max(hi, score(s.rows[i]));
        }
        spreads.push_back(hi - lo);
    }
    return spreads;
}

double rope_score(const PlacedScores& p) { return p.rope; }

void part2_relative(Report& r, const Options& options) {
    const Scores s = scores(kSamePairs, options.seeds, kDim);
    const IdentityErrors identity = relative_rotation_errors(kSamePairs, kDim);

    r.paragraph(
        "{}",
        fmt::format(
            "§4.4 One query $q$ and one key $k$ (entries $N(0, 1)$, $d = {}$) placed at three $(t, j)$ with the same "
            "distance $t - j = 3$. The score, the $1/\\sqrt{{d_k}}$ factor left out (it scales every score alike): "
            "$$(R_j k)^\\top (R_t q) = k^\\top R_j^\\top R_t\\, q = k^\\top R_{{t-j}}\\, q$$",
            kDim));
    std::vector<std::vector<Cell>> rows;
    for (const PlacedScores& p : s.rows)
        rows.push_back({p.seed, p.t, p.j, p.t - p.j, p.rope, p.relative, p.rope - p.relative});
    for (size_t first = 0; first < s.rows.size(); first += kSamePairs.size())  // one seed's three placements
        r.paragraph("Seed {}: scores {:+.12f}, {:+.12f}, {:+.12f}.", s.rows[first].seed, s.rows[first].rope,
                    s.rows[first + 1].rope, s.rows[first + 2].rope);
    r.table("scores", {"seed", "t", "j", "t − j", "$(R_j k)^\\top (R_t q)$", "$k^\\top R_{t-j}\\, q$", "difference"},
            rows);
    r.value("score_spread", s.rope_range);
    r.value("relative_form_error", s.relative_error);
    Claim scores_equal = rounding_claim(
        "scores_equal",
        "one q, k pair placed at (5, 2), (105, 102) and (1005, 1002) gets one score: it depends only on t − j",
        "spread 0: +1.685028392114 three times", s.rope_range,
        fmt::format("One q, k pair scores alike at (5, 2), (105, 102) and (1005, 1002), to {}, like the lecture's "
                    "three +1.685028392114: {}",
                    readable(s.rope_range),
                    s.rope_range < kTolerance ? "only t − j counts." : "the placements differ."));
    scores_equal.reason += "; the lecture's q and k are its own, so the equality compares, not the score";
    scores_equal.evidence = per_seed("spread of the three scores", spread_per_seed(s, kSamePairs.size(), rope_score));
    r.claim(std::move(scores_equal));

    r.paragraph("Why: $R_j^\\top R_t = R_{t-j}$ (turn by $t$, then back by $j$). The identity, entry by entry:");
    rows.clear();
    for (size_t i = 0; i < kSamePairs.size(); ++i)
        rows.push_back({kSamePairs[i].first, kSamePairs[i].second, identity.errors[i]});
    r.table("identity", {"t", "j", "$\\max |R_j^\\top R_t - R_{t-j}|$"}, rows);
    r.value("identity_error", identity.worst);
    r.claim(
        rounding_claim("identity_holds", "R_jᵀ R_t = R_{t-j}, to rounding", 9.5e-15, identity.worst,
                       fmt::format("$R_j^\\top R_t = R_{{t-j}}$ holds to {} per entry, against the lecture's {}: {}",
                                   readable(identity.worst), readable(9.5e-15),
                                   identity.worst < kTolerance ? "both rounding." : "more than rounding.")));
    r.takeaway(
        "rotating q and k by their own absolute positions makes the score depend only on t − j: "
        "the absolute positions cancel in $R_j^\\top R_t = R_{t-j}$.");
}

// ---- part 3 ------------------------------------------------------------------

double wrong_minus_plain(const PlacedScores& p) { return std::fabs(p.wrong - p.plain); }

void part3_wrong_version(Report& r, const Options& options) {
    const std::vector<Placement> placements{{5, 2}, {12, 2}, {42, 2}, {1005, 1002}, {1002, 2}};
    const Scores s = scores(placements, options.seeds, kDim);
    r.paragraph(
        "§4.3 The slides' version marked \"wrong\": $q_t$ and $k_j$ both rotated by $R_{\\Theta,t-j}$. Against RoPE "
        "($q$ by $R_t$, $k$ by $R_j$) and against no rotation at all, the same $q$ and $k$ as part 2:");
    std::vector<std::vector<Cell>> rows;
    for (const PlacedScores& p : s.rows)
        rows.push_back({p.seed, p.t, p.j, p.t - p.j, p.rope, p.wrong, p.plain, std::fabs(p.wrong - p.plain)});
    r.table("wrong_version",
            {"seed", "t", "j", "t − j", "RoPE", "wrong: both $R_{t-j}$", "$k^\\top q$ (no rotation)",
             "$|\\text{wrong} - k^\\top q|$"},
            rows);
    r.value("wrong_minus_no_rotation", s.wrong_minus_plain);
    r.value("rope_score_range", s.rope_range);
    r.value("wrong_score_range", s.wrong_range);
    std::vector<double> seed_worst;
    for (size_t first = 0; first < s.rows.size(); first += placements.size()) {
        double most = 0;
        for (size_t i = first; i < first + placements.size(); ++i) most = std::max(most, wrong_minus_plain(s.rows[i]));
        seed_worst.push_back(most);
    }
    Claim wrong = rounding_claim(
        "wrong_equals_no_rotation",
        "rotating both q and k by R_{t-j} (the slides' \"wrong\" version) gives the unrotated score kᵀq: the "
        "positions cancel",
        "1e-15 order", s.wrong_minus_plain,
        fmt::format("Rotating both q and k by $R_{{t-j}}$ gives the unrotated score $k^\\top q$ to {} (the lecture: "
                    "$10^{{-15}}$ order): {}",
                    readable(s.wrong_minus_plain),
                    s.wrong_minus_plain < kTolerance ? "the position cancels." : "the position stays."));
    wrong.evidence = per_seed("largest |wrong − kᵀq|", seed_worst);
    r.claim(std::move(wrong));
    r.paragraph(
        "{}",
        "$(R_m k)^\\top (R_m q) = k^\\top R_m^\\top R_m\\, q = k^\\top q$ because a rotation is orthogonal "
        "($R_m^\\top R_m = I$, exercise 7): whatever $m$ is, the rotation cancels. Across these distances the RoPE "
        "scores span " +
            Cell(s.rope_range).str() + ", the wrong version's " + readable(s.wrong_range) +
            ": it carries no position at all.");
    r.takeaway(
        "each vector must be turned by its OWN position; turning both by t − j cancels in the dot "
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
        "{}", fmt::format(
                  "§4.5 question 1: a rotation keeps lengths. {} vectors $x$ drawn from $N(0, 1)$ at positions 0 … {}: "
                  "$\\max\\, |\\lVert R_m x \\rVert - \\lVert x \\rVert| = $ {}. Position changes the direction "
                  "of $q$ and $k$, never how large they are.",
                  n, n - 1, readable(length_change)));
    r.value("norm_change", length_change);
    r.claim(rounding_claim("norms_kept", "a rotation keeps the length of every vector", 1.8e-15, length_change,
                           fmt::format("Rotating {} vectors changes no length by more than {}, against the "
                                       "lecture's {}: {}",
                                       n, readable(length_change), readable(1.8e-15),
                                       length_change < kTolerance ? "both rounding." : "more than rounding.")));

    // Similarity against distance, one frequency against RoPE's geometric
    // frequencies.
    const int64_t max_delta = options.quick ? 999 : 9999;
    constexpr int64_t search = 100;
    const FrequencyComparison c = compare_frequencies(max_delta, search, kDim);
    const int64_t alias = c.alias;
    const auto at = [](const std::vector<double>& s, int64_t delta) { return s[static_cast<size_t>(delta)]; };

    r.paragraph(
        "{}",
        fmt::format(
            "§4.5 question 2: the similarity of two positions $\\Delta$ apart is $(R_\\Delta u)^\\top (R_0 u)$ for a "
            "unit "
            "vector $u$ with equal weight on every pair, the mean over pairs of $\\mathrm{{cos}}(\\Delta\\theta_i)$. "
            "With "
            "one frequency $\\theta$ for every pair it is $\\mathrm{{cos}}(\\Delta\\theta)$, which comes back every "
            "$2\\pi/\\theta$ positions. $d = {}$:",
            kDim));
    std::vector<int64_t> deltas{0, 1, 2, 3, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000};
    deltas.push_back(alias);
    std::sort(deltas.begin(), deltas.end());
    deltas.erase(std::unique(deltas.begin(), deltas.end()), deltas.end());
    std::vector<std::vector<Cell>> rows;
    for (const int64_t delta : deltas)
        if (delta <= max_delta) rows.push_back({delta, at(c.one, delta), at(c.geometric, delta)});
    r.table("similarity", {"Δ", "one frequency $\\theta = 1$", "RoPE $\\theta_i = 10000^{-2(i-1)/d}$"}, rows);
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
             fmt::format("reproduced when the most similar distance in 1 … {} is 44: it is Δ = {}", search, alias),
             ClaimKind::check,
             fmt::format("With one frequency θ = 1 the distance in 1 … {} most like Δ = 0 is Δ = {} (similarity {}), "
                         "the lecture's 44; RoPE gives {} there.",
                         search, alias, Cell(at(c.one, alias)).str(), Cell(at(c.geometric, alias)).str())});

    // Long-range decay: |similarity| per decade of distance.
    rows.clear();
    for (size_t b = 0; b < c.rope_decades.size(); ++b) {
        const Decade &one = c.one_decades[b], &rope = c.rope_decades[b];
        rows.push_back(
            {fmt::format("{} … {}", one.first, one.last), one.max_abs, one.mean_abs, rope.max_abs, rope.mean_abs});
    }
    r.paragraph("Per decade of distance (long-range decay, RoFormer):");
    r.table("decay",
            {"Δ", "one frequency: largest |similarity|", "mean |similarity|", "RoPE: largest |similarity|",
             "mean |similarity|"},
            rows);
    r.claim({"rope_mean_similarity_decays",
             "with RoPE's geometric frequencies the similarity of two positions shrinks with their distance "
             "(long-range decay)",
             "", decade_means(c.rope_decades), c.rope_decays,
             "reproduced when RoPE's mean |similarity| falls from each decade of distance to the next",
             ClaimKind::check,
             fmt::format(
                 "RoPE's mean |similarity| goes {} over the decades of distance: {}", decade_means(c.rope_decades),
                 c.rope_decays ? "the long-range decay the lecture describes." : "it does not fall at every decade.")});
    const auto theta = frequencies(kDim);
    const double fastest_period = 2 * M_PI / theta.front(), slowest_period = 2 * M_PI / theta.back();
    r.paragraph(
        "{}",
        fmt::format(
            "Pair $i$ comes back every $2\\pi/\\theta_i$ positions. The fastest, $\\theta_1 = {}$ rad per position, "
            "has "
            "period {} positions; the slowest, $\\theta_{{{}}} = {}$, period {}: like the hands of a clock, together "
            "they tell positions apart over a long range.",
            Cell(theta.front()).str(), Cell(fastest_period).str(), kDim / 2, Cell(theta.back()).str(),
            group_thousands(slowest_period)));
    const bool fastest_ok = std::fabs(fastest_period - 6.3) < 0.05;
    r.claim({"fastest_period", "the fastest pair turns 1 rad per position: a period of 6.3 positions", 6.3,
             fastest_period, fastest_ok, "reproduced when 2π/θ_1 is 6.3 to one decimal", ClaimKind::check,
             fmt::format("The fastest pair, $\\theta_1 = {}$, comes back every $2\\pi/\\theta_1 = {:.2f}$ positions, "
                         "{} the lecture's 6.3.",
                         Cell(theta.front()).str(), fastest_period, fastest_ok ? "as" : "not")});
    const bool slowest_ok = std::fabs(slowest_period - 4.7e4) < 0.05e4;
    r.claim({"slowest_period", "the slowest pair's period is about 47,000 positions", "about 47,000", slowest_period,
             slowest_ok, "reproduced when 2π/θ_{d/2} is 47,000 to two digits", ClaimKind::check,
             fmt::format("The slowest pair, $\\theta_{{{}}} = 10000^{{-{}/{}}}$, comes back every {} positions, "
                         "{} the lecture's about 47,000.",
                         kDim / 2, kDim - 2, kDim, group_thousands(slowest_period), slowest_ok ? "as" : "not")});

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
        "§4.7 An untrained ModernLM (RoPE, d = 64, 2 layers, 4 query / 2 K/V heads; the identity holds for any "
        "weights) reads {} tokens of farm sentences twice: all at once, and one token per call at its absolute "
        "position with a KV cache. Each key is rotated once, by its own position, when it enters the cache, and "
        "never touched again.",
        T);
    std::vector<std::vector<Cell>> rows;
    std::vector<double> seed_worst(static_cast<size_t>(options.seeds), 0.0);
    for (const DecodingStep& s : decoding.steps) {
        double& most = seed_worst[static_cast<size_t>(s.seed)];
        most = std::max(most, s.max_diff);
        if (std::find(shown.begin(), shown.end(), s.position) != shown.end())
            rows.push_back({s.seed, s.position, std::string(farm::token(s.token)), s.cached_keys, s.max_diff});
    }
    r.table("decoding", {"seed", "position", "token", "cached keys", "largest |cached − full| logit"}, rows);
    r.value("max_cached_minus_full", decoding.worst);
    Claim cached = rounding_claim(
        "cached_equals_full",
        "decoding token by token with a cache of rotated keys gives the logits of the full "
        "forward pass",
        1.7e-16, decoding.worst,
        fmt::format("Decoding {} tokens one by one with a cache of rotated keys gives the full pass's logits {}, "
                    "against the lecture's {}.",
                    T, decoding.worst == 0.0 ? "bit for bit" : "to " + readable(decoding.worst), readable(1.7e-16)));
    if (decoding.worst == 0.0)
        cached.reason =
            "ours is 0, bit for bit: each query sees the same keys, rotated by the same angles, in the "
            "same order";
    cached.evidence = per_seed("largest |cached − full| logit", seed_worst);
    r.claim(std::move(cached));
    r.takeaway(
        "a key rotated by its own absolute position stays valid forever: RoPE and the KV cache "
        "work together, a new token only rotates its own q and k.");
}

// ---- part 6 ------------------------------------------------------------------

std::string pairing_name(ag::RopePairing p) {
    return p == ag::RopePairing::Half ? "half (i, i + d_h/2)" : "interleaved (2i−1, 2i)";
}

void part6_pairings(Report& r, const Options& options) {
    const PairingSwap swap = swap_pairings(options);
    r.paragraph(
        "§9 pitfall 4: \"the two RoPE implementations (adjacent pairs / first and second half) are different.\" "
        "They are the same rotation after a permutation of each head's dimensions (part 1), but a checkpoint must "
        "be run with the pairing it was trained with. Two models that differ only in their pairing ($d_h$: a "
        "head's size): {}.",
        swap.training);
    std::vector<std::vector<Cell>> rows;
    for (const PairingRun& run : swap.runs) {
        r.log(
            fmt::format("the model trained with the {} pairing: checkpoint {}", pairing_name(run.trained), run.status));
        rows.push_back({pairing_name(run.trained), run.right, run.wrong, run.permuted});
    }
    r.table("pairing_swap",
            {"trained with", "test perplexity, its own pairing", "the other pairing",
             "the other, $W_q$ and $W_k$ rows permuted"},
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
    const auto change = [](const PairingRun& run) { return fmt::format("{:.2f} → {:.2f}", run.right, run.wrong); };
    r.claim({"wrong_pairing_breaks_a_checkpoint",
             "A checkpoint run with the other RoPE pairing than it was trained with is a different, worse model.", "",
             fmt::format("test perplexity {} (half), {} (interleaved)", change(half), change(interleaved)), both_worse,
             fmt::format("reproduced when the other pairing raises the test perplexity of both checkpoints: ×{:.2f} "
                         "(trained half), ×{:.2f} (trained interleaved){}",
                         half.wrong / half.right, interleaved.wrong / interleaved.right,
                         both_worse || !options.quick ? ""
                                                      : " (--quick: a small model trained briefly has learned little "
                                                        "that depends on positions)"),
             ClaimKind::check,
             fmt::format("Run with the other pairing, the checkpoints' test perplexity goes {} (half) and {} "
                         "(interleaved): {}",
                         change(half), change(interleaved),
                         both_worse ? "a worse model, as the lecture warns." : "not worse in both.")});
    double worst = 0;
    for (const PairingRun& run : swap.runs) worst = std::max(worst, std::abs(run.permuted - run.right) / run.right);
    constexpr double kSame = 1e-9;
    r.claim({"pairings_equivalent_after_permutation",
             "The two pairings are mathematically equivalent: permute each head's rows of W_q and W_k and the other "
             "pairing computes the same model.",
             "", worst, worst < kSame,
             fmt::format("reproduced when the permuted model's perplexity is the trained one's to {} (relative): it "
                         "is, to {}",
                         readable(kSame), readable(worst)),
             ClaimKind::check,
             fmt::format("With each head's rows of $W_q$ and $W_k$ permuted, the other pairing gives the "
                         "checkpoints' perplexity to {} relative: {}",
                         readable(worst), worst < kSame ? "equivalent, as the lecture says." : "not the same model.")});
    r.takeaway(fmt::format(
        "the pairings are one rotation in two orders: a checkpoint run with the wrong one goes from perplexity {:.2f} "
        "to {:.2f}, permuting W_q and W_k's rows restores it exactly; load weights with the pairing they were "
        "trained with.",
        half.right, half.wrong));
}

// ---- part 7 ------------------------------------------------------------------

void part7_values_not_rotated(Report& r, const Options& options) {
    const std::vector<int64_t> shifts{0, 1, 10, 100, 1000};
    const RotatedValues rv = rotate_values(options, shifts);
    r.log(fmt::format("the half-pairing model of part 6: checkpoint {}", rv.status));
    r.paragraph(
        "§9 pitfall 2: \"RoPE is a position vector added to the input.\" It adds nothing: the embeddings go into "
        "the first layer as they are, and in every layer RoPE turns $q$ and $k$ by their own positions, never $v$. "
        "The checkpoint of part 6 trained with the half pairing ({}), its attention written by hand with the "
        "engine's `ag::rope` and `ag::attention_packed`:",
        rv.training);
    r.paragraph(
        "{}",
        fmt::format(
            "Written that way (nothing added to the input, only $q$ and $k$ turned) it gives the model's own logits to "
            "{}. Now turn $v$ as well: head output $t$ becomes $\\sum_j a_{{tj}} R_j v_j$ instead of "
            "$\\sum_j a_{{tj}} v_j$, and $R_j$ carries the absolute position $j$. Each of the {} test sentences is "
            "then "
            "read from position $s$ on instead of 0; the change is against $s = 0$:",
            readable(rv.by_hand_difference), group_thousands(static_cast<double>(rv.test_sentences))));
    r.value("by_hand_minus_engine", rv.by_hand_difference, "largest |logit by hand − the model's own|");
    std::vector<std::vector<Cell>> rows;
    for (const ShiftRow& row : rv.shifts)
        rows.push_back({row.shift, row.perplexity, row.attention_change, row.logit_change, row.rotated_perplexity,
                        row.rotated_attention_change, row.rotated_logit_change});
    r.table("shifted",
            {"first position s", "q, k turned: test perplexity", "q, k turned: change of layer 1's attention",
             "q, k turned: change of the logits", "v turned too: test perplexity",
             "v turned too: change of layer 1's attention", "v turned too: change of the logits"},
            rows);
    const ShiftRow& at0 = rv.shifts.front();
    const ShiftRow& far = rv.shifts.back();
    r.value("ppl_rotated_values", at0.rotated_perplexity);
    r.value("logit_change_far_shift", far.logit_change);
    r.value("rotated_logit_change_far_shift", far.rotated_logit_change);

    constexpr double kSame = 1e-9;
    const bool nothing_added = rv.by_hand_difference < kSame;
    r.claim({"rope_adds_nothing_to_the_input",
             "RoPE adds nothing to the input: it rotates q and k in every layer, and v is not rotated", "",
             rv.by_hand_difference, nothing_added,
             fmt::format("reproduced when the hand-written pass gives the model's logits to {}: it does to {}",
                         readable(kSame), readable(rv.by_hand_difference)),
             ClaimKind::check,
             fmt::format("A forward pass that adds nothing to the embeddings and turns only q and k in every layer "
                         "gives the trained model's logits to {}.",
                         readable(rv.by_hand_difference))});
    const bool worse = at0.rotated_perplexity > at0.perplexity;
    r.claim({"rotating_values_breaks_the_model", "v is not rotated: a model trained so breaks when v is rotated too",
             "", at0.rotated_perplexity, worse,
             fmt::format("reproduced when turning v raises the test perplexity: ×{:.2f}",
                         at0.rotated_perplexity / at0.perplexity),
             ClaimKind::check,
             fmt::format("Turning v as well takes the checkpoint's test perplexity from {:.2f} to {:.2f}{}",
                         at0.perplexity, at0.rotated_perplexity,
                         worse ? ": RoPE is on q and k only." : ", not worse: v did not matter here.")});
    const bool relative_only = far.logit_change < kSame && far.rotated_logit_change > 1e-3;
    r.claim({"only_relative_positions_count",
             "with q and k turned, the scores depend only on t − j, so a sentence read from another first position "
             "gives the same outputs; with v turned too, it does not",
             "", far.rotated_logit_change, relative_only,
             fmt::format("reproduced when, read from position {}, the logits change by less than {} with q and k "
                         "turned and by more than 0.001 with v turned too",
                         far.shift, readable(kSame)),
             ClaimKind::check,
             fmt::format("Read from position {} on, the same sentences' logits change by {} with q and k turned, by "
                         "{} with v turned too: {}",
                         far.shift, readable(far.logit_change), fmt::format("{:.2f}", far.rotated_logit_change),
                         relative_only ? "absolute position leaks in through v." : "no difference here.")});
    r.takeaway(fmt::format(
        "RoPE is no vector added to the input: it turns q and k in every layer, so only t − j reaches the scores; "
        "turn v too and the checkpoint's perplexity goes from {:.2f} to {:.2f}, and its outputs change with the "
        "absolute position.",
        at0.perplexity, at0.rotated_perplexity));
}

}  // namespace

const Lesson& lesson() {
    static const Lesson rope{
        "02_rope",
        "Rotary position embeddings (RoPE)",
        "§4 RoPE · 旋转位置编码",
        1,
        {{"§4.2",
          "$R_{\\Theta,m}$ and three ways to apply it",
          "The full block-diagonal matrix, the slides' element-wise form and the §4.6 matrix form "
          "(half-split pairing, after a permutation) rotate alike, and so does `ag::rope`.",
          part1_three_forms,
          {"lessons/rope/rotation.cpp", "autograd/ops/rope.cpp"}},
         {"§4.4",
          "Scores depend only on t − j",
          "One q, k pair at (5, 2), (105, 102), (1005, 1002) gets one score; $R_j^\\top R_t = R_{t-j}$.",
          part2_relative,
          {"lessons/rope/scores.cpp", "lessons/rope/rotation.cpp"}},
         {"§4.3",
          "The slides' \"wrong\" version",
          "Rotating both q and k by t − j gives exactly the unrotated score $k^\\top q$.",
          part3_wrong_version,
          {"lessons/rope/scores.cpp"}},
         {"§4.5",
          "Why 2-D blocks, why many frequencies",
          "Rotations keep norms; with one frequency Δ = 44 looks like Δ = 0, RoPE's geometric "
          "frequencies decay with distance.",
          part4_frequencies,
          {"lessons/rope/rotation.cpp", "lessons/rope/long_range_decay.cpp"}},
         {"§4.7",
          "RoPE and the KV cache",
          "Decoding token by token with a cache of rotated keys equals the full forward pass.",
          part5_kv_cache,
          {"lessons/rope/kv_cache.cpp"}},
         {"§9.4",
          "Pitfall 4: the two pairings on a trained model",
          "A ModernLM trained with one pairing and run with the other loses its quality; permuting $W_q$ and "
          "$W_k$'s rows per head makes the other pairing compute the same model.",
          part6_pairings,
          {"lessons/rope/pairing_swap.cpp"}},
         {"§9.2",
          "Pitfall 2: RoPE turns q and k, never v",
          "A trained ModernLM whose attention also turns v: its perplexity, and how its outputs change when the "
          "same sentences start at another position.",
          part7_values_not_rotated,
          {"lessons/rope/rotate_values.cpp", "lessons/rope/pairing_swap.cpp"}}},
        {},
        FarmLanguage::used};
    return rope;
}

}  // namespace lessons::rope
