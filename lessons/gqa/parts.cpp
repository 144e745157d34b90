#include "lessons/gqa/parts.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "lessons/common/progress.h"
#include "lessons/common/spread.h"
#include "lessons/common/svg.h"
#include "lessons/gqa/decoding_cost.h"
#include "lessons/gqa/gqa_is_mha.h"
#include "lessons/gqa/quality.h"
#include "nn/param_count.h"

namespace lessons::gqa {
namespace {

// "MHA" when every query head has its own K/V head, "MQA" when all share
// one, "GQA" in between (§5.2).
std::string attention_kind(int64_t n_heads, int64_t n_kv_heads) {
    return n_kv_heads == n_heads ? "MHA" : n_kv_heads == 1 ? "MQA" : "GQA";
}

// ---- part 1 ------------------------------------------------------------------

// The per-seed rows of part 1's check, as its evidence.
Table per_seed_check(const GqaAgainstMha& check) {
    Table t{"", {"seed", "K/V heads", "largest logit difference"}, {}};
    for (const CopyComparison& c : check.rows) t.rows.push_back({c.seed, c.kv_heads, c.max_logit_difference});
    return t;
}

// GQA ModernLMs against their MHA copies (repeat_kv_heads): one row per
// seed and K/V head count.
void check_gqa_is_mha(Report& r, const Options& options) {
    const nn::LMConfig base = nn::LMConfig::modern_lm();
    const GqaAgainstMha check =
        gqa_against_mha_copies(base, {2, 1}, options.seeds, farm::Language::named(options.language));
    std::vector<std::vector<Cell>> rows;
    for (const CopyComparison& c : check.rows)
        rows.push_back({c.seed, c.kv_heads, c.g, c.gqa_parameters, c.mha_parameters, c.max_logit_difference});
    r.paragraph(
        "§5.2: $g = h_q / h_{kv}$ query heads share one K/V head; query head $h$ (from 0) reads K/V head "
        "$\\lfloor h/g \\rfloor$.");
    const int64_t dh = base.head_dim();
    r.paragraph(
        "ModernLMs (d = {}, {}, seed = init seed) with 2 and 1 K/V heads, against MHA models whose "
        "$W_k$ and $W_v$ hold each K/V head copied $g$ times (rows h·{} … h·{}+{} = K/V head $\\lfloor h/g "
        "\\rfloor$), everything else copied: the logits on {} ({}).",
        base.d_model, count_of(base.n_heads, "query head"), dh, dh, dh - 1, count_of(check.sentences, "test sentence"),
        count_of(check.positions, "position"));
    r.table("equality",
            {"seed", "K/V heads", "g", "parameters GQA", "parameters MHA copy", "largest |logit GQA − logit MHA copy|"},
            rows);
    const double worst = check.worst;
    r.value("max_abs_logit_difference", worst);
    r.claim({"gqa_equals_mha_with_copied_heads",
             "a GQA model and the MHA model holding g copies of each of its K/V heads compute identical outputs",
             "bit for bit", worst, worst == 0.0, "reproduced when every logit is the same, bit for bit",
             ClaimKind::check,
             worst == 0.0
                 ? fmt::format("GQA models with 2 and 1 K/V heads give their MHA copies' logits bit for bit, over {}, "
                               "as the lecture says.",
                               count_of(options.seeds, "seed"))
                 : fmt::format("GQA models and their MHA copies differ by up to {}: not the same model.",
                               Cell(worst).str(true)),
             per_seed_check(check)});
}

// The attention parameters of d = 32, 8 query heads, for every K/V head
// count that divides 8: from the module and from the formula.
void count_attention_parameters(Report& r) {
    constexpr int64_t d = 32, query_heads = 8;
    const std::vector<AttentionParameters> counts = attention_parameters(d, query_heads);
    std::vector<std::vector<Cell>> rows;
    for (const AttentionParameters& c : counts)
        rows.push_back({attention_kind(query_heads, c.kv_heads), c.kv_heads, c.g, c.wq_wo, c.wk_wv, c.module, c.formula,
                        c.cached_per_token,
                        c.kv_heads == query_heads ? "4096"
                        : c.kv_heads == 1         ? "2304"
                                                  : ""});
    const int64_t agreeing =
        std::count_if(counts.begin(), counts.end(), [](const AttentionParameters& c) { return c.module == c.formula; });
    const bool agree = agreeing == static_cast<int64_t>(counts.size());
    const int64_t mha = counts.front().module, mqa = counts.back().module;  // 8 K/V heads, and 1
    r.paragraph(
        "Attention parameters for d = 32 and 8 query heads of 4 dimensions, every divisor of 8 as the K/V head "
        "count: `nn::ModernAttention`'s parameters against the formula $2d^2 + 2d \\cdot h_{kv} d_h$ ($W_q$ and "
        "$W_o$, then $W_k$ and $W_v$).");
    r.table("attention_parameters",
            {"attention", "K/V heads", "g", "$W_q + W_o$", "$W_k + W_v$", "parameters (module)", "parameters (formula)",
             "K, V values cached per token", "lecture"},
            rows);
    r.value("attention_parameters_mha", static_cast<double>(mha));
    r.value("attention_parameters_mqa", static_cast<double>(mqa));
    r.claim({"module_equals_formula",
             "the attention's parameters are $2d^2$ ($W_q$, $W_o$) + $2d \\cdot h_{kv} d_h$ ($W_k$, $W_v$): only "
             "$W_k$ and $W_v$ shrink",
             "", agreeing, agree, "reproduced when the module's count is the formula's for every K/V head count",
             ClaimKind::check,
             fmt::format("Our attention module's parameter count equals $2d^2 + 2d \\cdot h_{{kv}} d_h$ for {} of "
                         "the {} K/V head counts{}",
                         agreeing, rows.size(), agree ? ", as the lecture writes." : ".")});
    const auto same_count = [](const char* kind, int64_t ours, int64_t lecture) {
        return fmt::format("Our {} attention for $d = 32$ and 8 query heads has {} parameters, {}.", kind,
                           group_thousands(static_cast<double>(ours)),
                           ours == lecture ? std::string("as the lecture counts")
                                           : "the lecture " + group_thousands(static_cast<double>(lecture)));
    };
    r.claim({"attention_parameters_mha", "MHA's attention has 4096 parameters (d = 32, 8 query heads)", 4096, mha,
             mha == 4096, "reproduced when the counts are equal", ClaimKind::check, same_count("MHA", mha, 4096)});
    r.claim({"attention_parameters_mqa", "MQA's attention has 2304 parameters: GQA saves only a few parameters", 2304,
             mqa, mqa == 2304, "reproduced when the counts are equal", ClaimKind::check, same_count("MQA", mqa, 2304)});
    r.paragraph("MQA keeps {:.0f}% of MHA's attention parameters but only 1/8 of its cache.",
                100.0 * static_cast<double>(mqa) / static_cast<double>(mha));
}

void part1_gqa_is_mha(Report& r, const Options& options) {
    check_gqa_is_mha(r, options);
    count_attention_parameters(r);
    r.takeaway(
        "GQA is MHA whose query heads share K/V heads (the two models compute identical logits); "
        "it trims a few parameters, but what it really shrinks is the KV cache, by $h_q/h_{kv}$.");
}

// ---- part 2 ------------------------------------------------------------------

void part2_llama(Report& r, const Options&) {
    const DecodingSetup setup;
    const nn::LMConfig llama = nn::llama3_8b();
    const int64_t params = nn::count_parameters(llama).total();
    const int64_t weights = weight_bytes(llama, setup);
    constexpr double GiB = 1024.0 * 1024.0 * 1024.0, GB = 1e9;

    const double weight_gib = static_cast<double>(weights) / GiB;
    r.paragraph(
        "§5.3: Llama-3 8B ({}, {} of {}, {}) decodes {} of {} on an H100 ({:.0f} GB = {:.0f}·10⁹ bytes at {:.2f} "
        "TB/s). Weights: {} parameters (`nn::count_parameters`) × {} bytes (BF16) = {} bytes = {:.2f} GiB.",
        count_of(llama.n_layers, "layer"), count_of(llama.n_heads, "query head"), llama.head_dim(),
        count_of(llama.n_kv_heads, "K/V head"), count_of(setup.batch, "sequence"), count_of(setup.tokens, "token"),
        setup.memory_bytes / GB, setup.memory_bytes / GB, setup.bandwidth / 1e12,
        group_thousands(static_cast<double>(params)), setup.bytes_per_value,
        group_thousands(static_cast<double>(weights)), weight_gib);
    r.claim({"weight_gib", "Llama-3 8B's BF16 weights take 15.0 GiB", 15.0, weight_gib,
             std::fabs(weight_gib - 15.0) < 0.05, "reproduced when ours is 15.0 to one decimal", ClaimKind::check,
             fmt::format("Counting Llama-3 8B's parameters at 2 bytes each gives {:.2f} GiB of weights, {} the "
                         "lecture's 15.0 GiB.",
                         weight_gib, std::fabs(weight_gib - 15.0) < 0.05 ? "as" : "not")});
    r.paragraph(
        "The cache per token is $2 \\cdot L \\cdot h_{kv} \\cdot d_h \\cdot 2$ bytes ($L$ layers, K and V, BF16). "
        "Decoding is memory-bound: each step reads "
        "every weight and the whole cache once, so its time is (weights + cache) / bandwidth. The same weights for "
        "all three rows:");

    const std::array<int64_t, 3> kv_heads{32, 8, 1};
    const std::array<std::string, 3> keys{"mha", "gqa", "mqa"};
    const std::array<std::string, 3> lecture{"does not fit", "cache 1/4 of MHA's, ~3x faster", "cache 1/8 of GQA's"};
    std::array<DecodingCost, 3> costs;
    std::vector<std::vector<Cell>> rows;
    for (size_t i = 0; i < 3; ++i) {
        nn::LMConfig cfg = llama;
        cfg.n_kv_heads = kv_heads[i];
        costs[i] = decoding_cost(cfg, weights, setup);
        const DecodingCost& c = costs[i];
        rows.push_back({attention_kind(cfg.n_heads, cfg.n_kv_heads), cfg.n_kv_heads, c.cache_bytes_per_token,
                        c.cache_bytes, static_cast<double>(c.cache_bytes) / GiB,
                        static_cast<double>(c.bytes_per_step) / GB, c.step_seconds * 1e3, c.fits, lecture[i]});
    }
    r.table("decoding",
            {"attention", "K/V heads", "cache bytes per token", "cache bytes", "cache (GiB)", "weights + cache (GB)",
             "ms per step", "fits in 80 GB", "lecture"},
            rows);
    r.value("parameters", static_cast<double>(params));
    r.value("weight_bytes", static_cast<double>(weights));
    r.value("weight_gib", weight_gib);
    for (size_t i = 0; i < 3; ++i) {
        r.value("cache_bytes_" + keys[i], static_cast<double>(costs[i].cache_bytes));
        r.value("step_ms_" + keys[i], costs[i].step_seconds * 1e3);
    }
    // the lecture's claims about what fits
    const auto read_gb = [&](size_t i) { return static_cast<double>(costs[i].bytes_per_step) / GB; };
    const auto fit_rule = [&](const char* where) {
        return fmt::format("reproduced when weights + cache are {} the H100's {:.0f} GB", where,
                           setup.memory_bytes / GB);
    };
    const auto fit_verdict = [&](size_t i, bool lecture_fits) {
        return fmt::format("With {}, weights and cache take {:.1f} GB, {} the H100's {:.0f} GB: {}.",
                           attention_kind(llama.n_heads, kv_heads[i]), read_gb(i), costs[i].fits ? "within" : "over",
                           setup.memory_bytes / GB,
                           costs[i].fits == lecture_fits ? "as the lecture says" : "not as the lecture says");
    };
    r.claim({"mha_does_not_fit", "with MHA, this batch's cache and the weights do not fit in one H100", "does not fit",
             read_gb(0), !costs[0].fits, fit_rule("over"), ClaimKind::check, fit_verdict(0, false)});
    r.claim({"gqa_fits", "with GQA (8 K/V heads) they fit", "", read_gb(1), costs[1].fits, fit_rule("within"),
             ClaimKind::check, fit_verdict(1, true)});
    r.claim({"mqa_fits", "with MQA (1 K/V head) they fit", "", read_gb(2), costs[2].fits, fit_rule("within"),
             ClaimKind::check, fit_verdict(2, true)});
    const double mha_to_gqa = static_cast<double>(costs[0].cache_bytes) / static_cast<double>(costs[1].cache_bytes);
    const double gqa_to_mqa = static_cast<double>(costs[1].cache_bytes) / static_cast<double>(costs[2].cache_bytes);
    const double speedup = costs[0].step_seconds / costs[1].step_seconds;
    r.value("cache_ratio_mha_to_gqa", mha_to_gqa);
    r.value("cache_ratio_gqa_to_mqa", gqa_to_mqa);
    r.value("speedup_gqa_over_mha", speedup);
    const double mqa_speedup = costs[1].step_seconds / costs[2].step_seconds;
    r.value("speedup_mqa_over_gqa", mqa_speedup);
    r.claim({"cache_ratio_mha_to_gqa", "GQA shrinks the cache to 1/4 of MHA's (32 → 8 K/V heads)", 4.0, mha_to_gqa,
             mha_to_gqa == 4.0, "reproduced when the ratio is exactly 32 / 8 = 4", ClaimKind::check,
             fmt::format("GQA's cache is {:g} times smaller than MHA's, exactly $32/8$, as the lecture says.",
                         mha_to_gqa)});
    r.claim({"speedup_gqa_over_mha", "each GQA decoding step is about 3x faster than MHA's", "about 3x", speedup,
             std::fabs(speedup - 3.0) < 0.5, "reproduced when ours is within 0.5 of 3", ClaimKind::check,
             fmt::format("A memory-bound GQA step reads {:.1f} GB instead of MHA's {:.1f} GB: {:.2f} times faster, "
                         "against the lecture's about 3.",
                         read_gb(1), read_gb(0), speedup)});
    r.claim({"cache_ratio_gqa_to_mqa", "MQA shrinks the cache 8 times more than GQA", 8.0, gqa_to_mqa,
             gqa_to_mqa == 8.0, "reproduced when the ratio is exactly 8 / 1 = 8", ClaimKind::check,
             fmt::format("MQA's cache is {:g} times smaller than GQA's, exactly 8 K/V heads to 1, as the lecture "
                         "says.",
                         gqa_to_mqa)});
    r.paragraph(
        "GQA's cache is 1/{:.0f} of MHA's and its step {:.2f}x faster; MQA's cache is 1/{:.0f} of GQA's, but the "
        "weights now dominate: its step is only {:.2f}x faster.",
        mha_to_gqa, speedup, gqa_to_mqa, mqa_speedup);

    // A Llama built with MHA would also have larger wk and wv.
    nn::LMConfig mha = llama;
    mha.n_kv_heads = mha.n_heads;
    const int64_t mha_weights = weight_bytes(mha, setup);
    const DecodingCost own = decoding_cost(mha, mha_weights, setup);
    r.paragraph(
        "(An MHA Llama would also have {} more parameters in $W_k$, $W_v$: {:.2f} GiB of weights, {:.1f} ms per step, "
        "{}.)",
        group_thousands(static_cast<double>(nn::count_parameters(mha).total() - params)),
        static_cast<double>(mha_weights) / GiB, own.step_seconds * 1e3,
        own.fits ? "and it would fit" : "and it fits even less");
    r.takeaway(
        fmt::format("at long contexts the KV cache, not the weights, fills the GPU and sets the decoding "
                    "speed: MHA's {:.0f} GiB cache {} beside the weights, GQA's {:.0f} GiB {}, and each "
                    "GQA step reads {:.1f}x fewer bytes.",
                    static_cast<double>(costs[0].cache_bytes) / GiB, costs[0].fits ? "fits" : "does not fit",
                    static_cast<double>(costs[1].cache_bytes) / GiB, costs[1].fits ? "does" : "does not", speedup));
}

// ---- part 3 ------------------------------------------------------------------

// How each model of part 3 is shown.
struct ModelInfo {
    const char* model;
    const char* legend;   // its name on the perplexity figure
    const char* key;      // the value recorded for --json
    const char* lecture;  // the lecture's figure, if it gives one
};

const std::array<ModelInfo, Models> kModels{{
    {"MHA", "MHA", "ppl_mha", ""},
    {"GQA", "GQA", "ppl_gqa", "2.5262 (§7.2)"},
    {"MQA", "MQA", "ppl_mqa", ""},
    {"MHA mean-pooled to GQA", "", "ppl_mean_pooled", "'a large loss'"},
    {"  + 1 epoch (uptrained)", "uptrained GQA", "ppl_uptrained", "2.5017"},
    {"MHA + 1 epoch (control)", "MHA control", "ppl_control", "2.5010"},
}};

// How a model was trained.
std::string training_of(Model m, const QualitySetup& setup) {
    if (m == Pooled) return "MHA's, then pooled";
    if (m == Uptrained || m == Control)
        return fmt::format("+ {} at lr {:g}", count_of(setup.uptrain.epochs, "epoch"), setup.uptrain.lr);
    return count_of(setup.training.epochs, "epoch");
}

// `plot` written into --out as `file`, and shown on the page with `caption`.
void figure(Report& r, const Options& options, const std::string& file, const svg::LinePlot& plot,
            const std::string& caption) {
    svg::write(output_path(options, file), plot);
    r.figure(file, caption);
}

// What the quick run's reasons add: the finding is measured on a tiny model.
std::string quick_note(const Options& options, const QualitySetup& setup) {
    return options.quick ? fmt::format(" (--quick: a tiny model trained {} on {} sentences)",
                                       count_of(setup.training.epochs, "epoch"), setup.train.size())
                         : "";
}

// The rule a gap claim folds (quality.h, kClose): the gap within, or
// beyond, kClose of the distance above the floor of the model it is
// measured from, and how much of that distance it is.
std::string gap_rule(const Gap& gap, const char* within_or_beyond, const std::string& whose, double floor,
                     const std::string& note) {
    return fmt::format(
        "reproduced when the gap is {} {:.0f}% of {} distance above the grammar's perplexity {:.4f}: it is {:.0f}% "
        "of it{}",
        within_or_beyond, 100 * kClose, whose, floor, 100 * gap.share, note);
}

// Each seed's perplexity of models a and b and the gap b - a: the evidence
// of a claim on that gap, when there are several seeds.
Table gap_per_seed(const QualityRuns& runs, Model a, Model b) {
    if (runs.seeds.size() < 2) return {};
    const auto name = [](Model m) {
        return m == Uptrained ? "uptrained" : m == Control ? "control" : kModels[m].model;
    };
    Table t{"", {"seed", name(a), name(b), fmt::format("{} − {}", name(b), name(a))}, {}};
    for (size_t seed = 0; seed < runs.seeds.size(); ++seed) {
        const std::array<double, Models>& p = runs.seeds[seed].perplexity;
        t.rows.push_back({seed, p[a], p[b], p[b] - p[a]});
    }
    return t;
}

// What part 3 trains, and the model cache's word on each run (terminal).
void describe_runs(Report& r, const Options& options, const QualitySetup& setup, const QualityRuns& runs) {
    r.paragraph(
        "§5.4: ModernLMs ({}, $d = {}$) with 4, 2 and 1 K/V heads, {} on {} sentences. Uptraining: the MHA model's "
        "K and V heads mean-pooled in consecutive pairs (0,1 -> 0, 2,3 -> 1), then one more epoch at lr 1e-4 with a "
        "fresh AdamW; the fair control trains the MHA model that epoch the same way, on the same batches in the same "
        "order.",
        count_of(setup.base.n_heads, "query head"), setup.base.d_model, count_of(setup.training.epochs, "epoch"),
        group_thousands(static_cast<double>(setup.train.size())));
    for (size_t seed = 0; seed < runs.seeds.size(); ++seed)
        for (Model m : {Mha, Gqa, Mqa})
            r.log(fmt::format("seed {}, {} ({}): {} (models cached in {}/models/)", seed, kModels[m].model,
                              count_of(kKvHeads[m], "K/V head"), runs.seeds[seed].status[m], options.out));
}

// Every model's test perplexity, seed by seed, with the grammar's own.
void perplexity_table(Report& r, const QualitySetup& setup, const QualityRuns& runs) {
    const size_t seeds = runs.seeds.size();
    std::vector<std::string> columns{"model", "K/V heads", "K, V values cached per token", "training"};
    for (size_t seed = 0; seed < seeds; ++seed) columns.push_back(fmt::format("seed {}", seed));
    if (seeds > 1) columns.push_back("mean");
    columns.push_back("lecture");
    std::vector<std::vector<Cell>> rows;
    for (size_t m = 0; m < Models; ++m) {
        const ModelInfo& info = kModels[m];
        const int64_t cached = 2 * setup.base.n_layers * kKvHeads[m] * setup.base.head_dim();
        std::vector<Cell> cells{info.model, kKvHeads[m], cached, training_of(static_cast<Model>(m), setup)};
        for (const SeedRuns& s : runs.seeds) cells.emplace_back(s.perplexity[m]);
        if (seeds > 1) cells.push_back(runs.mean[m]);
        cells.push_back(info.lecture);
        rows.push_back(std::move(cells));
    }
    std::vector<Cell> floor_row{"the grammar itself", "", "", "(a perfect model)"};
    while (floor_row.size() + 1 < columns.size()) floor_row.push_back(runs.grammar_perplexity);  // seeds, mean
    floor_row.push_back("");
    rows.push_back(std::move(floor_row));
    r.paragraph("Test perplexity ({} sentences):", group_thousands(static_cast<double>(setup.test.size())));
    r.table("perplexity", columns, rows);
    for (size_t m = 0; m < Models; ++m) r.value(kModels[m].key, runs.mean[m]);
    r.value("grammar_perplexity", runs.grammar_perplexity);
    // the gaps between rows, which the lecture's findings are about
    r.value("gqa_minus_mha", runs.gaps.gqa.gap);
    r.value("mqa_minus_mha", runs.gaps.mqa.gap);
    r.value("pooled_minus_mha", runs.gaps.pooled.gap);
    r.value("uptrained_minus_control", runs.gaps.uptrained.gap);
}

// §5.4 what the claims compare, model by model: each one's test perplexity
// (the mean over the seeds, a bar from the lowest seed to the highest)
// against the grammar's own, the floor. The pooled model is left out: at
// about 3.4 it would squeeze the others' gaps of thousandths into one line.
void perplexity_figure(Report& r, const Options& options, const QualitySetup& setup, const QualityRuns& runs) {
    const size_t seeds = runs.seeds.size();
    svg::LinePlot plot{seeds > 1 ? fmt::format("§5.4 test perplexity per model: the mean over {} seeds, a bar from "
                                               "the lowest seed to the highest",
                                               seeds)
                                 : std::string("§5.4 test perplexity per model (1 seed)"),
                       "model", "test perplexity"};
    plot.lines = false;
    svg::Series trained{count_of(setup.training.epochs, "epoch") + " from scratch", {}, {}},
        more{training_of(Uptrained, setup), {}, {}};
    for (Model m : {Mha, Gqa, Mqa, Uptrained, Control}) {
        svg::Series& s = m == Uptrained || m == Control ? more : trained;
        s.x.push_back(static_cast<double>(plot.x_categories.size()));
        s.y.push_back(runs.mean[m]);
        s.low.push_back(runs.over_seeds[m].min);
        s.high.push_back(runs.over_seeds[m].max);
        plot.x_categories.push_back(fmt::format("{} ({})", kModels[m].legend, count_of(kKvHeads[m], "K/V head")));
    }
    plot.series = {trained, more};
    const double floor = runs.grammar_perplexity;
    plot.references.push_back({floor, fmt::format("the grammar's own perplexity {:.4f}: the floor", floor)});
    const std::array<double, Models>& mean = runs.mean;
    const double highest = std::max({mean[Mha], mean[Gqa], mean[Mqa]}),
                 lowest = std::min({mean[Mha], mean[Gqa], mean[Mqa]});
    figure(r, options, "03_perplexity.svg", plot,
           fmt::format("MHA, GQA and MQA end within {:.4f} of each other (MHA {:.4f}, GQA {:.4f}, MQA {:.4f}) while "
                       "MHA is still {:.4f} above the floor, and one more epoch leaves the uptrained GQA at {:.4f}, "
                       "{:+.4f} from the control's {:.4f}.",
                       highest - lowest, mean[Mha], mean[Gqa], mean[Mqa], mean[Mha] - floor, mean[Uptrained],
                       runs.gaps.uptrained.gap, mean[Control]));
}

// How the claims read the lecture's words on a gap (kClose), and the
// seed-to-seed noise to weigh a gap against.
void how_gaps_are_read(Report& r, const QualityRuns& runs) {
    const double floor = runs.grammar_perplexity;
    r.paragraph(
        "Against the lecture{}: its \"almost negligible\" and \"comparable\" are read as a gap within {:.0f}% of "
        "the distance the model compared against still has above the grammar's own perplexity {:.4f}, its "
        "\"large loss\" as beyond that.",
        runs.seeds.size() > 1 ? " (means over seeds)" : "", 100 * kClose, floor);
    if (runs.seeds.size() < 2) return;
    const Spread& noise = runs.over_seeds[Mha];
    r.paragraph(
        "The noise to weigh each gap against: MHA's own perplexity moves by {:.4f} between seeds ({:.4f} to "
        "{:.4f}), {:.0f}% of its distance to the floor.",
        noise.max - noise.min, noise.min, noise.max, 100.0 * (noise.max - noise.min) / (runs.mean[Mha] - floor));
}

// §5.4 "almost negligible": GQA and MQA against MHA.
void sharing_claims(Report& r, const QualityRuns& runs, const std::string& note) {
    const double mha = runs.mean[Mha], floor = runs.grammar_perplexity;
    for (const Model row : {Gqa, Mqa}) {
        const Gap& gap = row == Gqa ? runs.gaps.gqa : runs.gaps.mqa;
        r.claim({row == Gqa ? "gqa_close_to_mha" : "mqa_close_to_mha",
                 fmt::format("a model with {} ({}) is almost as good as MHA: the cost is almost negligible",
                             count_of(kKvHeads[row], "K/V head"), kModels[row].model),
                 "'almost negligible'", gap.gap, gap.close, gap_rule(gap, "within", "MHA's", floor, note),
                 ClaimKind::experiment,
                 fmt::format("{} ends {:+.2f} from MHA's test perplexity {:.2f}{}, {:.0f}% of MHA's distance to the "
                             "floor: {}.",
                             kModels[row].model, gap.gap, mha, runs.seeds.size() > 1 ? " on average" : "",
                             100 * gap.share, gap.close ? "almost negligible, as the lecture says" : "a cost here"),
                 gap_per_seed(runs, Mha, row)});
    }
}

// §9 pitfall 6, "MQA is the cheapest, so the best": our MHA, GQA and MQA
// side by side, with how far each one's final perplexity moves between
// seeds (the stability the runs can show without training more).
void pitfall6_mqa(Report& r, const QualityRuns& runs, const QualitySetup& setup) {
    const std::array<double, Models>& mean = runs.mean;
    r.paragraph(
        "§9 pitfall 6: \"MQA is the cheapest, so the best.\" The lecture's warning (Ainslie et al. 2023): MQA's "
        "quality drops more, and its training is less stable; GQA is the compromise. Ours: MHA {:.4f}, GQA {:.4f}, "
        "MQA {:.4f}{}.",
        mean[Mha], mean[Gqa], mean[Mqa], runs.seeds.size() > 1 ? " (means over seeds)" : "");
    const auto moves = [&](Model m) { return runs.over_seeds[m].max - runs.over_seeds[m].min; };
    if (runs.seeds.size() > 1) {
        std::vector<std::vector<Cell>> rows;
        for (Model m : {Mha, Gqa, Mqa})
            rows.push_back({kModels[m].model, kKvHeads[m], runs.over_seeds[m].min, runs.over_seeds[m].max, moves(m)});
        r.paragraph("How far each model's final test perplexity moves between {}:",
                    count_of(static_cast<int64_t>(runs.seeds.size()), "seed"));
        r.table("seed_spread", {"model", "K/V heads", "lowest", "highest", "spread"}, rows);
    }
    r.paragraph(
        "{} Our setting is far from the lecture's: $d = {}$ in {} of {}, {}, {} training sentences, where one K/V "
        "head has little to lose; Ainslie et al. measured T5 models of billions of parameters with dozens of "
        "heads.",
        std::string(runs.gaps.mqa.close ? "At this size MQA shows no cost: its gap to MHA is within the band that "
                                          "reads as negligible"
                                        : "Here MQA pays a cost beyond the band that reads as negligible") +
            (runs.seeds.size() < 2 ? "."
             : moves(Mqa) <= std::max(moves(Mha), moves(Gqa))
                 ? fmt::format(", and its seeds spread {:.4f}, no more than MHA's or GQA's: no sign of instability.",
                               moves(Mqa))
                 : fmt::format(", and its seeds spread {:.4f}, more than MHA's {:.4f} and GQA's {:.4f}.", moves(Mqa),
                               moves(Mha), moves(Gqa))),
        setup.base.d_model, count_of(setup.base.n_heads, "query head"), count_of(setup.base.head_dim(), "dimension"),
        count_of(setup.base.n_layers, "layer"), group_thousands(static_cast<double>(setup.train.size())));
}

// §5.4 "a large loss": MHA's K/V heads mean-pooled into GQA, before any
// more training.
void pooling_claim(Report& r, const QualityRuns& runs, const std::string& note) {
    const Gap& pooled = runs.gaps.pooled;
    r.claim({"pooling_loses", "mean-pooling a trained MHA model's K/V heads into GQA at once costs a lot",
             "'a large loss'", pooled.gap, pooled.beyond,
             gap_rule(pooled, "beyond", "MHA's", runs.grammar_perplexity, note), ClaimKind::experiment,
             fmt::format("Mean-pooling MHA's K/V heads into GQA costs {:+.2f} perplexity, {:.0f}% of MHA's distance "
                         "to the floor: {}.",
                         pooled.gap, 100 * pooled.share,
                         pooled.beyond ? "a large loss, as the lecture says"
                                       : fmt::format("below the {:.0f}% a large loss needs", 100 * kClose)),
             gap_per_seed(runs, Mha, Pooled)});
}

// §5.4 uptraining, step by step: MHA's last epoch, the jump where its K/V
// heads are pooled, and the epoch of uptraining beside the control's.
void uptraining_figure(Report& r, const Options& options, const QualitySetup& setup, const QualityRuns& runs) {
    constexpr size_t window = 20;
    const UptrainingCurves curves = uptraining_curves(runs, setup, window);
    svg::LinePlot plot{fmt::format("§5.4 uptraining: the training loss around the conversion ({}, a running mean "
                                   "of {} steps)",
                                   runs.seeds.size() > 1 ? fmt::format("mean over {} seeds", runs.seeds.size())
                                                         : std::string("1 seed"),
                                   window),
                       "training step", "training loss (cross-entropy)"};
    plot.series.push_back({"MHA, its last epoch", curves.mha.step, curves.mha.loss});
    plot.series.push_back({"GQA uptrained from MHA", curves.uptrained.step, curves.uptrained.loss});
    plot.series.push_back({"MHA, the control", curves.control.step, curves.control.loss});
    plot.references.push_back({curves.conversion + 0.5, "MHA mean-pooled into GQA", true});
    const std::vector<double>& up = curves.uptrained.loss;
    const double before = curves.mha.loss.back(), peak = *std::max_element(up.begin(), up.end());
    figure(r, options, "03_uptraining.svg", plot,
           fmt::format("Where MHA's K/V heads are pooled the loss {} from {:.3f} to {:.3f}; the uptrained GQA ends "
                       "the epoch at {:.3f}, against the control's {:.3f} on the same batches.",
                       peak > before ? "jumps" : "moves", before, peak, up.back(), curves.control.loss.back()));
}

// §5.4 after one more epoch: the uptrained model against the control, and
// a second epoch for both, a control of that budget.
void uptraining_claims(Report& r, const QualityRuns& runs, const std::string& note) {
    const std::array<double, Models>& mean = runs.mean;
    const double floor = runs.grammar_perplexity;
    const Gap &once = runs.gaps.uptrained, &twice = runs.gaps.uptrained_two_epochs;
    std::vector<std::vector<Cell>> budget;
    for (size_t seed = 0; seed < runs.seeds.size(); ++seed) {
        const SeedRuns& s = runs.seeds[seed];
        budget.push_back(
            {seed, s.perplexity[Uptrained] - s.perplexity[Control], s.second_epoch.uptrained - s.second_epoch.control});
    }
    if (runs.seeds.size() > 1) budget.push_back({"mean", once.gap, twice.gap});
    r.paragraph(
        "A control of the uptraining budget: both the uptrained model and the control train a second epoch the "
        "same way (lr 1e-4, a fresh AdamW, the batches of the next epoch). Uptrained minus control:");
    r.table("uptraining_budget", {"seed", "after 1 epoch", "after 2 epochs"}, budget);
    r.value("uptrained_minus_control_2_epochs", twice.gap);
    const std::string band = fmt::format("{:.0f}% of that distance", 100 * kClose);
    const std::string after_two =
        fmt::format("a second epoch for both leaves {:+.4f}, {:.0f}% of the control's distance then ({})", twice.gap,
                    100 * twice.share, twice.close ? "within " + band : "still beyond " + band);
    r.claim({"uptrained_comparable_to_control",
             "after one more epoch the uptrained GQA model is comparable to the MHA model trained that same epoch",
             0.0007, once.gap, once.close,
             gap_rule(once, "within", "the control's", floor, note) + (once.close ? "" : "; " + after_two),
             ClaimKind::experiment,
             fmt::format("One epoch after pooling, the uptrained GQA model is {:+.2f} from the control (lecture "
                         "+0.0007), {:.0f}% of the control's distance to the floor: {}.",
                         once.gap, 100 * once.share,
                         once.close ? "comparable, as the lecture says" : "not comparable here"),
             gap_per_seed(runs, Control, Uptrained)});
    const double below = runs.gaps.uptrained_minus_mha;
    r.claim({"uptrained_below_mha",
             "the uptrained model ends below the original MHA model, but only thanks to the extra epoch at a smaller "
             "lr, which the control gets too",
             "below it", below, below < 0,
             fmt::format("reproduced when the uptrained model's perplexity is below MHA's{}", below < 0 ? "" : note),
             ClaimKind::experiment,
             fmt::format("The uptrained model ends {:+.2f} from the original MHA model (the control, with the same "
                         "extra epoch, {:+.2f}): {}.",
                         below, mean[Control] - mean[Mha],
                         below < 0 ? "below it, as the lecture says" : "not below it here"),
             gap_per_seed(runs, Mha, Uptrained)});
}

// Whether our perplexities compare with the lecture's, or only their gaps.
void levels(Report& r, const Options& options, const QualitySetup& setup, const QualityRuns& runs) {
    const double mha = runs.mean[Mha], floor = runs.grammar_perplexity;
    const std::string one_seed = options.seeds > 1 ? "" : " One seed: `--seeds 3` shows the noise.";
    if (options.quick)
        r.paragraph(
            "With `--quick` a tiny model ($d = {}$) trains {} on {} sentences, so its levels (MHA {:.4f}) are far "
            "above the lecture's (about 2.50) and the language's own {:.4f}: the run without `--quick` compares with "
            "the lecture.{}",
            setup.base.d_model, count_of(setup.training.epochs, "epoch"), setup.train.size(), mha, floor, one_seed);
    else if (setup.language.is_uniform())
        r.paragraph(
            "Levels differ: the lecture's perplexities (about 2.50) come from a language calibrated to them; the "
            "uniform language's cannot go below its own {:.4f}, so compare the gaps between rows, not the levels.{}",
            floor, one_seed);
    else
        r.paragraph(
            "The lecture's language is calibrated to the lecture's GPT perplexity (`docs/farm_language.md`), so the "
            "levels compare too: MHA {:.4f} here, the lecture's models about 2.50; none can go below the language's "
            "own {:.4f}.{}",
            mha, floor, one_seed);
}

void part3_quality(Report& r, const Options& options) {
    const farm::Language language = farm::Language::named(options.language);
    const QualitySetup setup = options.quick ? QualitySetup::quick(language) : QualitySetup::full(language);
    Progress progress;
    const QualityRuns runs = train_quality_runs(setup, options.out, options.seeds, options.quick ? nullptr : &progress);
    const std::array<double, Models>& mean = runs.mean;
    const QualityGaps& gaps = runs.gaps;
    const std::string note = quick_note(options, setup);

    describe_runs(r, options, setup, runs);
    perplexity_table(r, setup, runs);
    perplexity_figure(r, options, setup, runs);
    how_gaps_are_read(r, runs);
    sharing_claims(r, runs, note);
    pitfall6_mqa(r, runs, setup);
    pooling_claim(r, runs, note);
    r.paragraph(
        "One more epoch takes the pooled model from {:.4f} to {:.4f} ({:+.4f}), the control (MHA) from {:.4f} "
        "to {:.4f}.",
        mean[Pooled], mean[Uptrained], mean[Uptrained] - mean[Pooled], mean[Mha], mean[Control]);
    uptraining_figure(r, options, setup, runs);
    uptraining_claims(r, runs, note);
    levels(r, options, setup, runs);
    r.takeaway(
        fmt::format("sharing K/V heads changed test perplexity by {:+.4f} (GQA) and {:+.4f} (MQA) here; "
                    "mean-pooling a trained MHA model into GQA cost {:+.4f} at once, and after one epoch of "
                    "uptraining it is {:+.4f} from the MHA model trained the same epoch ({:+.4f} after two).",
                    gaps.gqa.gap, gaps.mqa.gap, gaps.pooled.gap, gaps.uptrained.gap, gaps.uptrained_two_epochs.gap));
}

}  // namespace

const Lesson& lesson() {
    static const Lesson gqa{
        "03_gqa",
        "Grouped-query attention",
        "§5 GQA · 分组查询注意力",
        3,  // seeds: part 3's gaps are a few thousandths, near the seed-to-seed noise
        {{"§5.2",
          "GQA is MHA with shared K/V heads",
          "A GQA model and an MHA model holding g copies of each K/V head compute identical logits; the "
          "attention parameters of MHA, GQA and MQA for d = 32, 8 query heads.",
          part1_gqa_is_mha,
          {"lessons/gqa/gqa_is_mha.cpp", "lessons/gqa/kv_heads.cpp"}},
         {"§5.3",
          "What GQA saves: Llama-3 8B's KV cache",
          "Llama-3 8B decoding 32 × 8192 tokens on an H100: the KV cache and the memory-bound time per step "
          "with MHA, GQA and MQA, and which fit in 80 GB.",
          part2_llama,
          {"lessons/gqa/decoding_cost.cpp", "nn/param_count.cpp"}},
         {"§5.4",
          "Quality, and uptraining MHA into GQA",
          "ModernLMs with 4, 2 and 1 K/V heads on the farm language; an MHA model mean-pooled into GQA, then "
          "trained one more epoch, against the MHA model trained the same epoch.",
          part3_quality,
          {"lessons/gqa/quality.cpp", "lessons/gqa/kv_heads.cpp"}}},
        {},
        FarmLanguage::used};
    return gqa;
}

}  // namespace lessons::gqa
