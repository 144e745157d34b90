#include "lessons/rope/parts.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <string_view>
#include <utility>

#include "autograd/autograd.h"
#include "data/farm_language.h"
#include "lessons/common/svg.h"
#include "lessons/rope/rotation.h"
#include "nn/language_model.h"

namespace lessons::rope {
namespace {

constexpr int64_t kDim = 64;  // §4.5's d = 64, the head size of parts 1-4
constexpr double kTolerance = 1e-12;

std::vector<int64_t> range(int64_t n) {
    std::vector<int64_t> v;
    for (int64_t i = 0; i < n; ++i) v.push_back(i);
    return v;
}

// u · v for two [1, d] row vectors.
double dot(const ag::Tensor& u, const ag::Tensor& v) { return ag::sum(u * v).item(); }

// One vector of size d, entries N(0, 1).
ag::Tensor gaussian_row(ag::Generator& gen) { return ag::Tensor::randn({1, kDim}, gen); }

// x rotated by R_{Θ,m}: the definition (full matrix).
ag::Tensor rotated(const ag::Tensor& x, int64_t m) { return rotate_full_matrix(x, {m}); }

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
    const std::vector<int64_t> positions = range(n);
    enum Form { Elementwise, EngineInterleaved, MatrixForm, EngineHalf, Unpermuted, Forms };
    std::vector<double> worst(Forms, 0.0);
    for (int seed = 0; seed < options.seeds; ++seed) {
        ag::Generator gen(static_cast<uint64_t>(seed));
        const ag::Tensor x = ag::Tensor::randn({n, kDim}, gen);
        const ag::Tensor full = rotate_full_matrix(x, positions);
        const ag::Tensor x_half = to_half_order(x);
        const double diffs[Forms] = {
            ag::max_abs_diff(rotate_elementwise(x, positions), full),
            ag::max_abs_diff(rotate_engine(x, positions, ag::RopePairing::Interleaved), full),
            ag::max_abs_diff(from_half_order(rotate_matrix_form(x_half, positions)), full),
            ag::max_abs_diff(from_half_order(rotate_engine(x_half, positions, ag::RopePairing::Half)), full),
            ag::max_abs_diff(rotate_matrix_form(x, positions), full)};
        for (int f = 0; f < Forms; ++f)
            worst[static_cast<size_t>(f)] = std::max(worst[static_cast<size_t>(f)], diffs[f]);
    }
    r.paragraph(
        "{} vectors x ~ N(0, 1) of size {} at positions 0 … {} ({}), rotated by the full matrix (the "
        "definition) and by the O(d) forms. The half-split forms pair dimension i with i + d/2, so they get x "
        "with its dimensions permuted (2i → i, 2i+1 → i + d/2) and their output is permuted back:",
        n, kDim, n - 1, options.seeds == 1 ? "seed 0" : fmt::format("seeds 0 … {}", options.seeds - 1));
    r.table("forms", {"form", "pairs", "input", "max |· - full matrix|"},
            {{"element-wise (slides)", "(2i, 2i+1)", "x", worst[Elementwise]},
             {"ag::rope Interleaved (RoFormer)", "(2i, 2i+1)", "x", worst[EngineInterleaved]},
             {"matrix form §4.6", "(i, i+d/2)", "permuted x", worst[MatrixForm]},
             {"ag::rope Half (Llama, GPT-NeoX)", "(i, i+d/2)", "permuted x", worst[EngineHalf]},
             {"matrix form §4.6", "(i, i+d/2)", "x, not permuted", worst[Unpermuted]}});
    r.value("elementwise_minus_full", worst[Elementwise]);
    r.value("engine_interleaved_minus_full", worst[EngineInterleaved]);
    r.value("matrix_form_minus_full", worst[MatrixForm]);
    r.value("engine_half_minus_full", worst[EngineHalf]);
    r.value("unpermuted_matrix_form_minus_full", worst[Unpermuted]);
    const double forms_worst =
        std::max({worst[Elementwise], worst[EngineInterleaved], worst[MatrixForm], worst[EngineHalf]});
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
             "", worst[Unpermuted], worst[Unpermuted] > 0.1,
             fmt::format("without the permutation the matrix form misses the full matrix by {}, with it by {}",
                         Cell(worst[Unpermuted]).str(), Cell(worst[MatrixForm]).str(true))});
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

const std::vector<std::pair<int64_t, int64_t>> kSamePairs{{5, 2}, {105, 102}, {1005, 1002}};

void part2_relative(Report& r, const Options& options) {
    r.paragraph(
        "§4.4 One query q and one key k (entries N(0, 1), d = {}) placed at three (t, j) with the same distance "
        "t - j = 3. Score = k̃_jᵀ q̃_t = (R_j k)ᵀ (R_t q) (the 1/√d_k factor is left out: it scales every score "
        "alike).",
        kDim);
    std::vector<std::vector<Cell>> rows;
    double spread = 0.0, relative_form_error = 0.0;
    for (int seed = 0; seed < options.seeds; ++seed) {
        ag::Generator gen(static_cast<uint64_t>(seed));
        const ag::Tensor q = gaussian_row(gen), k = gaussian_row(gen);
        std::vector<double> scores;
        for (const auto& [t, j] : kSamePairs) {
            const double score = dot(rotated(k, j), rotated(q, t));
            const double relative = dot(k, rotated(q, t - j));  // kᵀ R_{t-j} q
            scores.push_back(score);
            relative_form_error = std::max(relative_form_error, std::fabs(score - relative));
            rows.push_back({seed, t, j, t - j, score, relative, score - relative});
        }
        const auto [lo, hi] = std::minmax_element(scores.begin(), scores.end());
        spread = std::max(spread, *hi - *lo);
        r.paragraph("Seed {}: scores {:+.12f}, {:+.12f}, {:+.12f}.", seed, scores[0], scores[1], scores[2]);
    }
    r.table("scores", {"seed", "t", "j", "t - j", "(R_j k)ᵀ(R_t q)", "kᵀ R_{t-j} q", "difference"}, rows);
    r.value("score_spread", spread);
    r.value("relative_form_error", relative_form_error);
    Claim scores_equal = rounding_claim(
        "scores_equal",
        "one q, k pair placed at (5, 2), (105, 102) and (1005, 1002) gets one score: it depends only on t - j",
        "+1.685028392114 three times", spread, "the three scores of a seed differ by at most");
    scores_equal.reason += "; the lecture's q and k are its own, so the equality compares, not the score";
    r.claim(std::move(scores_equal));

    r.paragraph("Why: R_jᵀ R_t = R_{t-j} (turn by t, then back by j). The identity, entry by entry:");
    rows.clear();
    double identity_error = 0.0;
    for (const auto& [t, j] : kSamePairs) {
        const ag::Tensor product = ag::matmul(rotation_matrix(j, kDim).t(), rotation_matrix(t, kDim));
        const double error = ag::max_abs_diff(product, rotation_matrix(t - j, kDim));
        identity_error = std::max(identity_error, error);
        rows.push_back({t, j, error});
    }
    r.table("identity", {"t", "j", "max |R_jᵀ R_t - R_{t-j}|"}, rows);
    r.value("identity_error", identity_error);
    r.claim(rounding_claim("identity_holds", "R_jᵀ R_t = R_{t-j}, to rounding", 9.5e-15, identity_error,
                           "the largest entry error is"));
    r.takeaway(
        "rotating q and k by their own absolute positions makes the score depend only on t - j: "
        "the absolute positions cancel in R_jᵀ R_t = R_{t-j}.");
}

// ---- part 3 ------------------------------------------------------------------

void part3_wrong_version(Report& r, const Options& options) {
    const std::vector<std::pair<int64_t, int64_t>> pairs{{5, 2}, {12, 2}, {42, 2}, {1005, 1002}, {1002, 2}};
    r.paragraph(
        "§4.3 The slides' version marked \"wrong\": q_t and k_j both rotated by R_{Θ,t-j}. Against RoPE (q by "
        "R_t, k by R_j) and against no rotation at all, same q and k as part 2:");
    std::vector<std::vector<Cell>> rows;
    double wrong_minus_plain = 0.0, rope_range = 0.0, wrong_range = 0.0;
    for (int seed = 0; seed < options.seeds; ++seed) {
        ag::Generator gen(static_cast<uint64_t>(seed));
        const ag::Tensor q = gaussian_row(gen), k = gaussian_row(gen);
        const double plain = dot(k, q);
        double rope_lo = INFINITY, rope_hi = -INFINITY, wrong_lo = INFINITY, wrong_hi = -INFINITY;
        for (const auto& [t, j] : pairs) {
            const double rope = dot(rotated(k, j), rotated(q, t));
            const double wrong = dot(rotated(k, t - j), rotated(q, t - j));
            rope_lo = std::min(rope_lo, rope), rope_hi = std::max(rope_hi, rope);
            wrong_lo = std::min(wrong_lo, wrong), wrong_hi = std::max(wrong_hi, wrong);
            wrong_minus_plain = std::max(wrong_minus_plain, std::fabs(wrong - plain));
            rows.push_back({seed, t, j, t - j, rope, wrong, plain, std::fabs(wrong - plain)});
        }
        rope_range = std::max(rope_range, rope_hi - rope_lo);
        wrong_range = std::max(wrong_range, wrong_hi - wrong_lo);
    }
    r.table("wrong_version",
            {"seed", "t", "j", "t - j", "RoPE", "wrong: both R_{t-j}", "kᵀq (no rotation)", "|wrong - kᵀq|"}, rows);
    r.value("wrong_minus_no_rotation", wrong_minus_plain);
    r.value("rope_score_range", rope_range);
    r.value("wrong_score_range", wrong_range);
    r.claim(rounding_claim("wrong_equals_no_rotation",
                           "rotating both q and k by R_{t-j} (the slides' \"wrong\" version) gives the unrotated "
                           "score kᵀq: the positions cancel",
                           "1e-15 order", wrong_minus_plain, "|wrong - kᵀq| is at most"));
    r.paragraph(
        "(R_m k)ᵀ (R_m q) = kᵀ R_mᵀ R_m q = kᵀ q because a rotation is orthogonal (R_mᵀ R_m = I, exercise 7): "
        "whatever m is, the rotation cancels. Across these distances the RoPE scores span {}, the wrong "
        "version's {}: it carries no position at all.",
        Cell(rope_range).str(), Cell(wrong_range).str());
    r.takeaway(
        "each vector must be turned by its OWN position; turning both by t - j cancels in the dot "
        "product and the model learns nothing about position.");
}

// ---- part 4 ------------------------------------------------------------------

// How alike two positions Δ apart look without content: the score between a
// unit vector u = (1, 0, 1, 0, …)/√(d/2) at position 0 and the same u at
// position Δ. Each pair contributes cos(Δ θ_i)/(d/2). Δ = 0 … max_delta.
std::vector<double> similarity(int64_t max_delta, double base) {
    std::vector<double> u(static_cast<size_t>(kDim), 0.0);
    for (int64_t i = 0; i < kDim; i += 2) u[static_cast<size_t>(i)] = 1.0 / std::sqrt(kDim / 2.0);
    const ag::Tensor unit = ag::Tensor::from({1, kDim}, u);
    const std::vector<int64_t> deltas = range(max_delta + 1);
    const ag::Tensor copies = ag::matmul(ag::Tensor::ones({max_delta + 1, 1}), unit);
    const ag::Tensor turned = rotate_engine(copies, deltas, ag::RopePairing::Interleaved, base);
    return ag::matmul(turned, unit.t()).to_vector();  // row Δ: (R_Δ u)ᵀ (R_0 u), R_0 = I
}

void part4_frequencies(Report& r, const Options& options) {
    // Norms, on the engine's rotation, positions 0 … n-1.
    const int64_t n = options.quick ? 64 : 4096;
    ag::Generator gen(0);
    const ag::Tensor x = ag::Tensor::randn({n, kDim}, gen);
    const auto norms = [](const ag::Tensor& v) { return ag::sqrt(ag::sum(v * v, {1})); };
    const double norm_change =
        ag::max_abs_diff(norms(rotate_engine(x, range(n), ag::RopePairing::Interleaved)), norms(x));
    r.paragraph(
        "§4.5 question 1: a rotation keeps lengths. {} vectors x ~ N(0, 1) at positions 0 … {}: "
        "max | ‖R_m x‖ - ‖x‖ | = {}. Position changes the direction of q and k, never how large they are.",
        n, n - 1, Cell(norm_change).str(true));
    r.value("norm_change", norm_change);
    r.claim(rounding_claim("norms_kept", "a rotation keeps the length of every vector", 1.8e-15, norm_change,
                           "max | ‖R_m x‖ - ‖x‖ | is"));

    // Similarity against distance, one frequency (base 1: θ_i = 1 for every
    // pair) against RoPE's geometric frequencies.
    const int64_t max_delta = options.quick ? 999 : 9999;
    const std::vector<double> one = similarity(max_delta, 1.0);
    const std::vector<double> geometric = similarity(max_delta, 10000.0);
    constexpr int64_t search = 100;
    int64_t alias = 1;
    for (int64_t delta = 2; delta <= search; ++delta)
        if (one[static_cast<size_t>(delta)] > one[static_cast<size_t>(alias)]) alias = delta;
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
        if (delta <= max_delta) rows.push_back({delta, at(one, delta), at(geometric, delta)});
    r.table("similarity", {"Δ", "one frequency θ = 1", "RoPE θ_i = 10000^(-2(i-1)/d)"}, rows);
    const double turns = static_cast<double>(alias) / (2.0 * M_PI);
    r.paragraph(
        "With one frequency the most similar distance in 1 … {} is Δ = {} ({:.3f} turns): similarity {}, as if "
        "the two tokens were at the same position. RoPE at Δ = {}: {}.",
        search, alias, turns, Cell(at(one, alias)).str(), alias, Cell(at(geometric, alias)).str());
    r.value("one_frequency_alias_distance", static_cast<double>(alias));
    r.value("one_frequency_similarity_at_alias", at(one, alias));
    r.value("rope_similarity_at_alias", at(geometric, alias));
    r.claim({"one_frequency_aliases",
             "with one frequency for every pair, Δ = 44 (about 7 turns) looks exactly like Δ = 0", 44,
             static_cast<double>(alias), alias == 44,
             fmt::format("the most similar distance in 1 … {} is Δ = {} ({:.3f} turns, similarity {}); RoPE's "
                         "geometric frequencies give {} there",
                         search, alias, turns, Cell(at(one, alias)).str(), Cell(at(geometric, alias)).str())});

    // Long-range decay: |similarity| per decade of distance.
    rows.clear();
    std::vector<double> rope_means;
    for (int64_t lo = 1; lo * 10 - 1 <= max_delta; lo *= 10) {
        const auto band = [&](const std::vector<double>& s) {
            double most = 0.0, total = 0.0;
            for (int64_t delta = lo; delta < lo * 10; ++delta) {
                most = std::max(most, std::fabs(at(s, delta)));
                total += std::fabs(at(s, delta));
            }
            return std::pair{most, total / static_cast<double>(lo * 9)};
        };
        const auto [one_max, one_mean] = band(one);
        const auto [rope_max, rope_mean] = band(geometric);
        rope_means.push_back(rope_mean);
        rows.push_back({fmt::format("{} … {}", lo, lo * 10 - 1), one_max, one_mean, rope_max, rope_mean});
    }
    r.paragraph("Per decade of distance (long-range decay, RoFormer):");
    r.table("decay", {"Δ", "one freq.: max |sim|", "mean |sim|", "RoPE: max |sim|", "mean |sim|"}, rows);
    bool decays = true;
    for (size_t b = 1; b < rope_means.size(); ++b) decays = decays && rope_means[b] < rope_means[b - 1];
    std::string means;
    for (const double m : rope_means) means += (means.empty() ? "" : " → ") + Cell(m).str();
    r.claim({"rope_mean_similarity_decays",
             "with RoPE's geometric frequencies the similarity of two positions shrinks with their distance "
             "(long-range decay)",
             "", means, decays,
             decays ? "RoPE's mean |similarity| falls from each decade of distance to the next"
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
        one_y.push_back(at(one, delta));
        rope_y.push_back(at(geometric, delta));
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

// T tokens of farm sentences laid end to end (cut at T).
ag::Tensor farm_tokens(int64_t T, uint64_t seed) {
    ag::Generator gen(seed);
    std::vector<double> ids;
    while (static_cast<int64_t>(ids.size()) < T)
        for (const int64_t id : farm::sample_sentence(static_cast<int>(gen.randint(4)), gen).ids)
            ids.push_back(static_cast<double>(id));
    ids.resize(static_cast<size_t>(T));
    return ag::Tensor::from({1, T}, ids);
}

void part5_kv_cache(Report& r, const Options& options) {
    const int64_t T = options.quick ? 12 : 40;
    const std::vector<int64_t> shown{0, 1, 2, 3, 5, 10, 20, 30, 39};
    r.paragraph(
        "§4.7 An untrained ModernLM (RoPE, d = 64, 2 layers, 4 query / 2 KV heads; the identity holds for any "
        "weights) reads {} tokens of farm sentences twice: all at once (forward), and one token per call at its "
        "absolute position with a KV cache (forward_cached). Each key is rotated once, by its own position, when "
        "it enters the cache, and never touched again.",
        T);
    std::vector<std::vector<Cell>> rows;
    double worst = 0.0;
    ag::NoGradGuard no_grad;
    for (int seed = 0; seed < options.seeds; ++seed) {
        const nn::LanguageModel model(nn::LMConfig::modern_lm(), static_cast<uint64_t>(seed));
        const ag::Tensor ids = farm_tokens(T, static_cast<uint64_t>(seed));
        const ag::Tensor full = model.forward(ids);
        std::vector<nn::KVCache> caches = model.new_caches();
        for (int64_t t = 0; t < T; ++t) {
            const ag::Tensor step = model.forward_cached(ids.narrow(1, t, 1), {t}, caches);
            const double diff = ag::max_abs_diff(step, full.narrow(1, t, 1));
            worst = std::max(worst, diff);
            if (std::find(shown.begin(), shown.end(), t) != shown.end())
                rows.push_back(
                    {seed, t, std::string(farm::token(static_cast<int64_t>(ids.at({0, t})))), caches[0].slots(), diff});
        }
    }
    r.table("decoding", {"seed", "position", "token", "cached keys", "max |cached - full| logits"}, rows);
    r.value("max_cached_minus_full", worst);
    Claim cached =
        rounding_claim("cached_equals_full",
                       "decoding token by token with a cache of rotated keys gives the logits of the full forward pass",
                       1.7e-16, worst, "the largest difference over every position is");
    if (worst == 0.0)
        cached.reason =
            "ours is 0, bit for bit: each query sees the same keys, rotated by the same angles, in the "
            "same order";
    r.claim(std::move(cached));
    r.takeaway(
        "a key rotated by its own absolute position stays valid forever: RoPE and the KV cache "
        "work together, a new token only rotates its own q and k.");
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
          "Decoding token by token with a cache of rotated keys equals the full forward pass.", part5_kv_cache}}};
    return rope;
}

}  // namespace lessons::rope
