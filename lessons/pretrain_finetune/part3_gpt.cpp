// Part 3, §2.8: the pre-trained GPT on the subject-number task, and the
// diagnosis of k = 4-6 through the LM's own agreement and two pre-training
// controls (controls.h). This file reports; the computation is in
// subject_task.* and controls.*.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <stdexcept>

#include <fmt/ranges.h>

#include "lessons/common/evaluation.h"
#include "lessons/common/model_cache.h"
#include "lessons/common/spread.h"
#include "lessons/common/svg.h"
#include "lessons/pretrain_finetune/controls.h"
#include "lessons/pretrain_finetune/gpt_setup.h"
#include "lessons/pretrain_finetune/parts.h"
#include "lessons/pretrain_finetune/subject_task.h"

namespace lessons::pretrain_finetune {
namespace {

// The lecture's figures (means over 3 seeds; "" where it gives none), by
// method and labelled-set size (§2.8 and exercise 10).
struct LectureFigure {
    std::string in_distribution, extrapolation;
};
LectureFigure lecture_figure(const std::string& method, int64_t n) {
    static const std::map<std::pair<std::string, int64_t>, LectureFigure> figures{
        {{"scratch", 16}, {"0.461", ""}},
        {{"scratch", 256}, {"0.982", "0.587"}},
        {{"linear probe", 16}, {"1.000", ""}},
        {{"linear probe", 256}, {"1.000", "1.000"}},
        {{"full FT lr 1e-3", 16}, {"0.910", "(below probe)"}},
        {{"full FT lr 1e-3", 256}, {"1.000", "0.932"}},
        {{"full FT lr 1e-4", 16}, {"(a little > 0.910)", ""}},
        {{"zero-shot", 0}, {"1.000", ""}}};
    const auto found = figures.find({method, n});
    return found == figures.end() ? LectureFigure{} : found->second;
}

std::vector<double> one_to(size_t n) {
    std::vector<double> x;
    for (size_t i = 1; i <= n; ++i) x.push_back(static_cast<double>(i));
    return x;
}

// Bitwise: the largest |difference| between two models' parameters.
double max_parameter_diff(const nn::Module& a, const nn::Module& b) {
    const auto pa = a.parameters(), pb = b.parameters();
    double worst = 0;
    for (size_t i = 0; i < pa.size(); ++i) worst = std::max(worst, ag::max_abs_diff(pa[i], pb[i]));
    return worst;
}

// Accuracies and shares in the tables: three decimals (the runs' own
// numbers, seed by seed, are exact counts and stay as they are).
double three_decimals(double x) { return std::round(x * 1000) / 1000; }

// train_lm's defaults for the setup's epochs: the baseline's and every control's.
LmTrainOptions pretrain_options(const GptSetup& setup) {
    LmTrainOptions options;
    options.epochs = setup.pretrain_epochs;
    return options;
}

CachedLm pretrain(Report& r, const Options& options, const GptSetup& setup, const std::vector<farm::Sentence>& train) {
    const LmTrainOptions train_options = pretrain_options(setup);
    Progress progress;
    const auto start = std::chrono::steady_clock::now();
    // Named after the run itself (model_cache.h): lesson 05 trains the same
    // GPT (seed 0, 5 epochs, the same corpus) and loads this file.
    CachedLm gpt = cached_lm(options.out, setup.config, 0, train, train_options, &progress);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const nn::LMConfig& c = setup.config;
    r.paragraph(
        "Pre-training (§2.6, generative): {} GPT (d = {}, {}, {}, learned positions; {} parameters), "
        "seed 0, {} of AdamW (lr 1e-3, batches of 32) on {} unlabelled farm sentences.",
        options.quick ? "a tiny" : "the lecture-2", c.d_model, count_of(c.n_layers, "layer"),
        count_of(c.n_heads, "head"), group_thousands(static_cast<double>(gpt.model->num_parameters())),
        count_of(setup.pretrain_epochs, "epoch"), group_thousands(static_cast<double>(train.size())));
    r.log(fmt::format("pre-trained GPT: {} ({})", gpt.status, format_duration(seconds)));
    return gpt;
}

// The pre-trained LM measured as the controls are (ControlRun).
struct LmMeasures {
    double test_perplexity = 0;
    std::vector<AgreementResult> agreement;  // [k - 1]
};

LmMeasures report_gpt(Report& r, const Options& options, const GptSetup& setup, const CachedLm& gpt,
                      const farm::Corpora& corpora, const std::vector<farm::Sentence>& train,
                      const farm::Language& language, const std::vector<std::vector<farm::Sentence>>& agreement_sets) {
    const LmMeasures lm{perplexity(*gpt.model, corpora.test), agreement_per_k(*gpt.model, agreement_sets)};
    r.value("gpt_test_perplexity", lm.test_perplexity);
    const auto& agreement = lm.agreement;
    std::vector<std::vector<Cell>> rows;
    for (size_t k = 0; k < agreement.size(); ++k)
        rows.push_back(
            {k + 1, k < 3 ? "within training" : "extrapolation", agreement[k].accuracy, agreement[k].p_correct});
    r.paragraph(
        "The pre-trained GPT's own agreement test. k is the number of prepositional phrases between the subject and "
        "its verb, each ending in an attractor, a noun of the other number. For {} prefixes per k the GPT is right "
        "when it puts more probability on the verb forms of the subject's number than on the others; p(correct) is "
        "the mean share of the verb forms' probability that goes to the right number:",
        setup.agreement_prefixes);
    r.table("gpt_agreement", {"k", "distance", "accuracy", "p(correct)"}, rows);

    // The floor under the training loss: the grammar's own cross-entropy per
    // predicted token on the sentences the GPT trains on (no model beats it
    // on average).
    const double floor = std::log(grammar_perplexity(train, language));
    r.value("grammar_cross_entropy_train", floor);
    svg::LinePlot plot{"Pre-training the GPT on the farm corpus", "step", "cross-entropy"};
    const std::vector<double> losses = step_losses(gpt.logs);
    plot.series.push_back({"batch loss", one_to(losses.size()), losses});
    // a guide named in the legend: a label on the line would sit on the noisy curve
    plot.series.push_back({fmt::format("the grammar's floor, {:.3f}", floor),
                           {1.0, static_cast<double>(losses.size())},
                           {floor, floor},
                           true});
    svg::write(output_path(options, "01_gpt_pretraining_loss.svg"), plot);
    r.figure("01_gpt_pretraining_loss.svg",
             fmt::format("The loss of every batch goes from {:.3f} to {:.3f} over {} batches ({}); the grey dashes "
                         "are the grammar's own cross-entropy on these sentences, {:.3f}, which no model beats on "
                         "average.",
                         losses.front(), losses.back(), group_thousands(static_cast<double>(losses.size())),
                         count_of(setup.pretrain_epochs, "epoch"), floor));
    return lm;
}

// The labelled sets (half singular subjects) and the test sets.
void report_data(Report& r, const std::vector<int64_t>& sizes, const SubjectData& data) {
    std::vector<std::pair<std::string, const std::vector<farm::Sentence>*>> sets;
    for (size_t i = 0; i < sizes.size(); ++i) sets.emplace_back(fmt::format("train {}", sizes[i]), &data.train_sets[i]);
    sets.emplace_back("test, in distribution", &data.test.in_distribution);
    sets.emplace_back("test, extrapolation", &data.test.extrapolation);
    std::vector<std::vector<Cell>> rows;
    for (const auto& [name, set] : sets) {
        int64_t plural = 0, tokens = 0;
        int k_lo = 100, k_hi = 0;
        for (const farm::Sentence& p : *set) {
            plural += p.subject_plural;
            tokens += static_cast<int64_t>(p.ids.size());
            k_lo = std::min(k_lo, p.k);
            k_hi = std::max(k_hi, p.k);
        }
        const auto n = static_cast<int64_t>(set->size());
        rows.push_back({name, n, n - plural, plural, fmt::format("{}-{}", k_lo, k_hi), tokens});
    }
    r.table("sets", {"set", "examples", "singular", "plural", "k", "tokens"}, rows);
}

struct ZeroShot {
    AgreementResult in_distribution, extrapolation;
};

std::string method_key(const std::string& method) {
    static const std::map<std::string, std::string> keys{{"scratch", "scratch"},
                                                         {"linear probe", "probe"},
                                                         {"full FT lr 1e-3", "full_ft_lr1e-3"},
                                                         {"full FT lr 1e-4", "full_ft_lr1e-4"}};
    return keys.at(method);
}

// The claims' accuracies as one figure: per method and labelled-set size,
// the mean over the seeds at k = 1-3 and at k = 4-6, bars from the lowest
// to the highest seed; zero-shot (no labels, no seeds) last, without bars.
// A coin flip scores 0.5 on two classes in expectation, whatever their mix.
void plot_accuracy(Report& r, const Options& options, const std::vector<SubjectRun>& runs, const ZeroShot& zero_shot,
                   const std::vector<int64_t>& sizes) {
    const auto acc = method_accuracies(runs);
    const int seeds = options.seeds;
    svg::LinePlot plot{
        fmt::format("Subject-number task: test accuracy, {}",
                    seeds > 1 ? fmt::format("mean over {} seeds (bars: min to max)", seeds) : std::string("one seed")),
        "method and labelled examples", "test accuracy"};
    plot.lines = false;
    plot.dodge = 10;
    svg::Series within{"k = 1-3, as long as the training prefixes", {}, {}},
        beyond{"k = 4-6, longer than any training prefix (extrapolation)", {}, {}};
    const auto add = [&](svg::Series& s, const Spread& x) {
        s.x.push_back(static_cast<double>(plot.x_categories.size()));
        s.y.push_back(x.mean);
        s.low.push_back(x.values.size() > 1 ? x.min : std::numeric_limits<double>::quiet_NaN());
        s.high.push_back(x.values.size() > 1 ? x.max : std::numeric_limits<double>::quiet_NaN());
    };
    for (const MethodSpec& spec : subject_methods())
        for (int64_t n : sizes) {
            const MethodAccuracy& a = acc.at({spec.name, n});
            add(within, a.in_distribution);
            add(beyond, a.extrapolation);
            plot.x_categories.push_back(fmt::format("{} {}", spec.name == "linear probe" ? "probe" : spec.name, n));
        }
    for (const auto& [s, x] :
         {std::pair{&within, zero_shot.in_distribution.accuracy}, std::pair{&beyond, zero_shot.extrapolation.accuracy}})
        add(*s, Spread{x, x, x, {x}});
    plot.x_categories.push_back("zero-shot");
    plot.series = {within, beyond};
    plot.references.push_back({0.5, "chance: 0.5"});
    svg::write(output_path(options, "01_subject_accuracy.svg"), plot);
    const int64_t few = sizes.front(), more = sizes.back();
    r.figure(
        "01_subject_accuracy.svg",
        fmt::format("Left dot of each pair: k = 1-3, right: k = 4-6. With {} labels the linear probe on the "
                    "pre-trained GPT scores {:.3f} at k = 1-3 and the same GPT from scratch {:.3f} (chance 0.5); "
                    "with {} labels, at k = 4-6, the probe scores {:.3f} and scratch {:.3f}.",
                    few, acc.at({"linear probe", few}).in_distribution.mean,
                    acc.at({"scratch", few}).in_distribution.mean, more,
                    acc.at({"linear probe", more}).extrapolation.mean, acc.at({"scratch", more}).extrapolation.mean));
}

void report_results(Report& r, const Options& options, const std::vector<SubjectRun>& runs, const ZeroShot& zero_shot,
                    const std::vector<int64_t>& sizes) {
    const int seeds = options.seeds;
    const auto acc = method_accuracies(runs);
    std::vector<std::vector<Cell>> rows;
    for (const MethodSpec& spec : subject_methods())
        for (const auto& [key, a] : acc) {
            if (key.first != spec.name) continue;
            int64_t trainable = 0;
            for (const SubjectRun& run : runs)
                if (run.spec.name == spec.name && run.labelled == key.second) trainable = run.trainable;
            const LectureFigure lecture = lecture_figure(spec.name, key.second);
            rows.push_back({spec.name, key.second, trainable, a.in_distribution.mean, a.in_distribution.min,
                            a.extrapolation.mean, a.extrapolation.min, lecture.in_distribution, lecture.extrapolation});
        }
    const LectureFigure lecture = lecture_figure("zero-shot", 0);
    rows.push_back({"zero-shot", 0, 0, zero_shot.in_distribution.accuracy, zero_shot.in_distribution.accuracy,
                    zero_shot.extrapolation.accuracy, zero_shot.extrapolation.accuracy, lecture.in_distribution,
                    lecture.extrapolation});
    r.paragraph("Accuracy over {} (mean and min; zero-shot has no seed), beside the lecture's means:",
                count_of(seeds, "seed"));
    r.table("accuracy",
            {"method", "labelled", "trainable", "k=1-3 mean", "k=1-3 min", "k=4-6 mean", "k=4-6 min", "lecture k=1-3",
             "lecture k=4-6"},
            rows);
    plot_accuracy(r, options, runs, zero_shot, sizes);

    std::vector<std::vector<Cell>> per_seed;
    for (const SubjectRun& run : runs)
        per_seed.push_back({run.spec.name, run.labelled, run.seed, run.losses.back(), run.in_distribution,
                            run.extrapolation, run.body_unchanged});
    r.table("runs", {"method", "labelled", "seed", "last train loss", "k=1-3", "k=4-6", "body unchanged"}, per_seed);

    for (const auto& [key, a] : acc) {
        const std::string prefix = fmt::format("{}_{}", method_key(key.first), key.second);
        for (const auto& [k, spread] : {std::pair{"k1-3", a.in_distribution}, std::pair{"k4-6", a.extrapolation}})
            r.value(fmt::format("{}_{}_mean", prefix, k), spread.mean);
    }
    r.value("zero_shot_k1-3", zero_shot.in_distribution.accuracy);
    r.value("zero_shot_k4-6", zero_shot.extrapolation.accuracy);
}

// A method's short name in the tables' column heads.
std::string short_name(const std::string& method) {
    return method == "linear probe" ? "probe" : method == "full FT lr 1e-3" ? "full FT" : method;
}

// At each k: the LM's own agreement beside each method's accuracy at that
// k (the probe, full FT at lr 1e-3 and scratch; every labelled-set size).
void report_per_k(Report& r, const std::vector<SubjectRun>& runs, const LmMeasures& lm,
                  const std::vector<int64_t>& sizes, int seeds, int64_t agreement_prefixes) {
    const auto acc = method_accuracies(runs);
    const std::vector<std::string> methods{"linear probe", "full FT lr 1e-3", "scratch"};
    std::vector<std::string> columns{"k", "distance", "LM accuracy", "LM p(correct)"};
    for (const std::string& method : methods)
        for (int64_t n : sizes) columns.push_back(fmt::format("{} {}", short_name(method), n));
    std::vector<std::vector<Cell>> rows;
    for (int k = 1; k <= kTestKs; ++k) {
        const AgreementResult& own = lm.agreement.at(static_cast<size_t>(k - 1));
        std::vector<Cell> row{k, k <= 3 ? "within training" : "extrapolation", three_decimals(own.accuracy),
                              three_decimals(own.p_correct)};
        for (const std::string& method : methods)
            for (int64_t n : sizes) row.emplace_back(three_decimals(acc.at({method, n}).per_k.at(k - 1).mean));
        rows.push_back(std::move(row));
    }
    // Where the LM is least often right, and what the probe with the most labels scores there.
    size_t worst = 0;
    for (size_t k = 1; k < lm.agreement.size(); ++k)
        if (lm.agreement[k].accuracy < lm.agreement[worst].accuracy) worst = k;
    const double probe_there = acc.at({"linear probe", sizes.back()}).per_k.at(worst).mean;
    r.paragraph(
        "Per k: the pre-trained LM's own agreement (the agreement table above, {} prefixes per k) beside each "
        "method's test accuracy at that k, the mean over {} (the same runs, their test prefixes split by k; full FT "
        "at lr 1e-3). A probe and a fine-tuned head read the body that makes the LM's prediction. The LM is least "
        "often right at k = {} ({:.3f}, p(correct) {:.3f}); the probe with {} labels scores {:.3f} there.",
        agreement_prefixes, count_of(seeds, "seed"), worst + 1, lm.agreement[worst].accuracy,
        lm.agreement[worst].p_correct, sizes.back(), probe_there);
    r.table("per_k", columns, rows);
}

// "5, 8, 11"
std::string positions_str(const std::set<size_t>& positions) { return fmt::format("{}", fmt::join(positions, ", ")); }

// The positions at which prefixes end (where the classifier reads).
std::set<size_t> last_positions(const std::vector<farm::Sentence>& prefixes) {
    std::set<size_t> positions;
    for (const farm::Sentence& p : prefixes) positions.insert(p.ids.size() - 1);
    return positions;
}

// Why k = 4-6 is extrapolation for the body too: pre-training never fed
// those positions, or never predicted a verb from them. The controls
// below measure what that costs.
void explain_extrapolation(Report& r, const std::vector<farm::Sentence>& corpus, const SubjectData& data,
                           const nn::LMConfig& config) {
    size_t inputs = 0;                 // a sentence of L tokens feeds positions 0 … L-2
    std::set<size_t> verb_predicting;  // positions t with a verb at t + 1
    for (const farm::Sentence& s : corpus) {
        inputs = std::max(inputs, s.ids.size() - 1);
        for (size_t t = 0; t + 1 < s.ids.size(); ++t)
            if (farm::is_verb(s.ids[t + 1])) verb_predicting.insert(t);
    }
    r.paragraph(
        "k = 4-6 is extrapolation for the pre-trained body too. Pre-training fed positions 0-{} and predicted the verb "
        "from positions {} only; the test prefixes end at {} (k = 1-3) and {} (k = 4-6). Learned position rows {}-{} "
        "never received a gradient from the loss (AdamW's weight decay only shrank their random N(0, 1) "
        "initialisation). A frozen probe can only read what the body computes there; the controls below change one "
        "of these causes at a time.",
        inputs - 1, positions_str(verb_predicting), positions_str(last_positions(data.test.in_distribution)),
        positions_str(last_positions(data.test.extrapolation)), inputs, config.max_len - 1);
    r.value("trained_positions", static_cast<double>(inputs));
}

// The controls measured beside the baseline, and what they move.
struct Diagnosis {
    std::vector<ControlRun> controls;
    int64_t labelled = 0;     // the probe's labelled-set size the sentence is about (the largest)
    std::vector<Move> moves;  // per control: that probe at k = 4-6 against the baseline's
    std::string sentence;     // which control moves it, and by how much
};

// "higher in 3 of 3 seeds", "the same mean": how a control moved an accuracy.
std::string moved(const Move& m) {
    if (m.change == 0) return "the same mean";
    return fmt::format("{:+.3f}; {} in {} of {}", m.change, m.change > 0 ? "higher" : "lower", m.order.holding,
                       count_of(m.order.seeds, "seed"));
}

// One sentence from the numbers: every control, the one that moves the
// probe most first.
std::string diagnosis_sentence(const Diagnosis& d) {
    std::vector<size_t> order(d.controls.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return std::abs(d.moves[a].change) > std::abs(d.moves[b].change); });
    std::vector<std::string> clauses;
    for (size_t i : order)
        clauses.push_back(
            fmt::format("{}, to {:.3f} ({})", d.controls[i].control.name, d.moves[i].control.mean, moved(d.moves[i])));
    return fmt::format("Which cause moves the linear probe at k = 4-6 ({} labels; baseline {:.3f}): {}.", d.labelled,
                       d.moves.front().baseline.mean, fmt::join(clauses, "; "));
}

// The mean of the LM's agreement accuracy over k = 4-6 (sets of equal size).
double lm_beyond(const std::vector<AgreementResult>& agreement) {
    return (agreement.at(3).accuracy + agreement.at(4).accuracy + agreement.at(5).accuracy) / 3;
}

Diagnosis report_controls(Report& r, const Options& options, const GptSetup& setup, const LmMeasures& lm,
                          const std::vector<SubjectRun>& runs, std::vector<ControlRun> controls) {
    Diagnosis d{std::move(controls), setup.labelled.back(), {}, ""};
    const std::string probe = "linear probe", full_ft = "full FT lr 1e-3";
    for (const ControlRun& c : d.controls) d.moves.push_back(move_of(runs, c.runs, probe, d.labelled, true));
    d.sentence = diagnosis_sentence(d);

    std::vector<std::vector<Cell>> about{{"baseline", "the GPT above"}};
    for (const ControlRun& c : d.controls) {
        about.push_back({c.control.name, c.control.changes});
        r.log(fmt::format("{} GPT: {}", c.control.name, c.lm.status));
    }
    r.paragraph(
        "The diagnosis: {} controls, each the same pre-training ({} GPT, seed 0, {}, {} sentences) with one "
        "candidate cause changed, then the same probe and full fine-tuning (lr 1e-3) runs, seed i against the "
        "baseline's seed i:",
        d.controls.size(), options.quick ? "the tiny" : "the lecture-2", count_of(setup.pretrain_epochs, "epoch"),
        group_thousands(static_cast<double>(d.controls.front().control.corpus.size())));
    r.table("control_pretraining", {"pre-training", "changes"}, about);

    // Each LM's agreement per k: the baseline's, then every control's.
    std::vector<std::pair<std::string, const std::vector<AgreementResult>*>> lms{{"baseline", &lm.agreement}};
    for (const ControlRun& c : d.controls) lms.emplace_back(c.control.name, &c.agreement);
    std::vector<std::string> columns{"k", "distance"};
    for (const auto& [name, _] : lms)
        for (const char* what : {"accuracy", "p(correct)"}) columns.push_back(fmt::format("{} {}", name, what));
    std::vector<std::vector<Cell>> agreement;
    for (size_t k = 0; k < lm.agreement.size(); ++k) {
        std::vector<Cell> row{k + 1, k < 3 ? "within training" : "extrapolation"};
        for (const auto& [_, a] : lms)
            for (double x : {a->at(k).accuracy, a->at(k).p_correct}) row.emplace_back(three_decimals(x));
        agreement.push_back(std::move(row));
    }
    r.paragraph("Each pre-trained LM's own agreement per k ({} prefixes per k):", setup.agreement_prefixes);
    r.table("control_agreement", columns, agreement);

    const int64_t few = setup.labelled.front(), more = setup.labelled.back();
    const auto row_of = [&](const std::string& name, double ppl, const std::vector<AgreementResult>& own,
                            const std::vector<SubjectRun>& of) {
        const auto acc = method_accuracies(of);
        std::vector<Cell> row{name, ppl, three_decimals(lm_beyond(own))};
        for (const auto& [method, n] : {std::pair{probe, few}, std::pair{probe, more}, std::pair{full_ft, more}})
            for (const Spread& x : {acc.at({method, n}).in_distribution, acc.at({method, n}).extrapolation})
                row.emplace_back(three_decimals(x.mean));
        return row;
    };
    std::vector<std::vector<Cell>> rows{row_of("baseline", lm.test_perplexity, lm.agreement, runs)};
    for (const ControlRun& c : d.controls)
        rows.push_back(row_of(c.control.name, c.test_perplexity, c.agreement, c.runs));
    r.paragraph(
        "Their test perplexity (the k 0-3 test set), the LM's agreement over k = 4-6, and the mean accuracy "
        "over {} of the methods on each:",
        count_of(options.seeds, "seed"));
    r.table(
        "controls",
        {"pre-training", "test perplexity", "LM k=4-6", fmt::format("probe {} k=1-3", few),
         fmt::format("probe {} k=4-6", few), fmt::format("probe {} k=1-3", more), fmt::format("probe {} k=4-6", more),
         fmt::format("full FT {} k=1-3", more), fmt::format("full FT {} k=4-6", more)},
        rows);
    std::vector<std::vector<Cell>> per_seed;
    for (const ControlRun& c : d.controls)
        for (const SubjectRun& run : c.runs)
            per_seed.push_back(
                {c.control.name, run.spec.name, run.labelled, run.seed, run.in_distribution, run.extrapolation});
    r.table("control_runs", {"pre-training", "method", "labelled", "seed", "k=1-3", "k=4-6"}, per_seed);
    for (size_t i = 0; i < d.controls.size(); ++i) {
        const std::string prefix = fmt::format("{}_probe_{}_k4-6", d.controls[i].control.key, d.labelled);
        r.value(prefix + "_mean", d.moves[i].control.mean);
        r.value(prefix + "_change", d.moves[i].change);
    }
    r.paragraph(d.sentence);
    return d;
}

// A claim's evidence: two accuracies seed by seed (a one-value side, such
// as zero-shot, repeats in every row).
Table per_seed(const std::string& first_name, const Spread& first, const std::string& second_name,
               const Spread& second) {
    Table t{"", {"seed", first_name, second_name}, {}};
    const size_t seeds = std::max(first.values.size(), second.values.size());
    for (size_t i = 0; i < seeds; ++i) t.rows.push_back({static_cast<int64_t>(i), first.at(i), second.at(i)});
    return t;
}

// "reproduced" or "not reproduced", the end of a verdict.
std::string outcome(bool reproduced) { return reproduced ? "reproduced" : "not reproduced"; }

// The control that removes extrapolation from pre-training.
const ControlRun& extrapolation_control(const Diagnosis& d) {
    for (const ControlRun& c : d.controls)
        if (c.control.corpus_only) return c;
    throw std::logic_error("the diagnosis has no control of the pre-training corpus");
}

// "0.800 with GPT-2 init (+0.020) and 0.993 with k 0-6 in pre-training (+0.213)"
std::string control_scores(const Diagnosis& d) {
    std::vector<std::string> scores;
    for (size_t i = 0; i < d.controls.size(); ++i)
        scores.push_back(fmt::format("{:.3f} with {} ({:+.3f})", d.moves[i].control.mean, d.controls[i].control.name,
                                     d.moves[i].change));
    return fmt::format("{}", fmt::join(scores, " and "));
}

// The lecture's "the probe is right at k = 4-6 too", and our control's
// finding that removing extrapolation from pre-training is what lifts it.
void report_probe_extrapolation(Report& r, const std::vector<SubjectRun>& runs, const LmMeasures& lm,
                                const Diagnosis& d, const std::string& quick_note) {
    const int64_t more = d.labelled;
    const Spread probe = method_accuracies(runs).at({"linear probe", more}).extrapolation;
    constexpr double lecture = 1.0;
    const bool all_right = probe.mean >= 0.9995;  // 1.000 to the lecture's three decimals
    r.claim({fmt::format("probe_{}_extrapolates", more),
             fmt::format("With {} labels, the linear probe is right on the longer prefixes too (k = 4-6)", more),
             lecture, three_decimals(probe.mean), all_right,
             all_right ? fmt::format("{:.3f} on the mean, 1.000 to three decimals", probe.mean)
                       : fmt::format("{:.3f} below 1.000 on the mean; the LM itself is right on {:.3f} of the k = 4-6 "
                                     "prefixes; the probe scores {}{}",
                                     lecture - probe.mean, lm_beyond(lm.agreement), control_scores(d), quick_note),
             ClaimKind::experiment,
             all_right ? fmt::format("Tested the {}-label linear probe at k = 4-6: {:.3f} against the lecture's 1.000: "
                                     "reproduced.",
                                     more, probe.mean)
                       : fmt::format("Tested the {}-label linear probe at k = 4-6: {:.3f} against the lecture's 1.000, "
                                     "not reproduced; the LM itself agrees on only {:.3f} there.",
                                     more, probe.mean, lm_beyond(lm.agreement)),
             per_seed("linear probe, k = 4-6", probe, "linear probe, k = 1-3",
                      method_accuracies(runs).at({"linear probe", more}).in_distribution)});
    const ControlRun& longer = extrapolation_control(d);
    const Move& lift = d.moves.at(static_cast<size_t>(&longer - d.controls.data()));
    const bool lifts = lift.change > 0 && lift.order.clear();
    r.claim({fmt::format("pretraining_k0-{}_lifts_probe_{}", kControlKMax, more),
             fmt::format("Pre-trained on sentences with k = 0-{} (no extrapolation left), the linear probe with {} "
                         "labels scores higher at k = 4-6 than on the baseline GPT, in every seed (our control)",
                         kControlKMax, more),
             "", fmt::format("{:.3f} vs {:.3f}", lift.control.mean, lift.baseline.mean), lifts,
             d.sentence + (lifts ? "" : quick_note), ClaimKind::check,
             fmt::format("Tested our control, pre-training on k = 0-{}: the {}-label probe at k = 4-6 scores {:.3f} "
                         "against the baseline's {:.3f}, higher in {} of {}: {}.",
                         kControlKMax, more, lift.control.mean, lift.baseline.mean, lift.order.holding,
                         count_of(lift.order.seeds, "seed"), outcome(lifts)),
             per_seed(longer.control.name, lift.control, "baseline GPT", lift.baseline)});
}

// The lecture's findings, each checked on our means.
// `quick_note`: said after a reason where a finding does not hold ("" in a
// full run).
void report_findings(Report& r, const std::vector<SubjectRun>& runs, const ZeroShot& zero_shot,
                     const std::vector<int64_t>& sizes, const Diagnosis& diagnosis, const std::string& quick_note) {
    const auto acc = method_accuracies(runs);
    const int64_t few = sizes.front(), more = sizes.back();
    // One side of a finding: a method's mean accuracy with n labels, at
    // k = 1-3 or (extrapolation) k = 4-6; zero-shot has no labels and no seeds.
    struct Side {
        std::string method;
        int64_t labelled = 0;
        bool extrapolation = false;
    };
    const auto pick = [](const MethodAccuracy& a, const Side& s) {
        return s.extrapolation ? a.extrapolation : a.in_distribution;
    };
    const auto over_seeds = [&](const Side& s) {
        if (s.method == "zero-shot") {
            const double x = zero_shot.in_distribution.accuracy;
            return Spread{x, x, x, {x}};
        }
        return pick(acc.at({s.method, s.labelled}), s);
    };
    // A side under a control, where it was measured: the control's runs,
    // or for scratch, which never reads the pre-training corpus, the
    // baseline's when only the corpus changed.
    const auto under = [&](const ControlRun& c, const Side& s) -> std::optional<Spread> {
        if (s.method == "scratch" && c.control.corpus_only) return over_seeds(s);
        const auto controlled = method_accuracies(c.runs);
        const auto found = controlled.find({s.method, s.labelled});
        if (found == controlled.end()) return std::nullopt;
        return pick(found->second, s);
    };
    // "linear probe, 16 labels, k = 1-3"
    const auto describe = [&](const Side& s) {
        if (s.method == "zero-shot") return std::string("zero-shot, k = 1-3");
        return fmt::format("{}, {} labels, k = {}", s.method, s.labelled, s.extrapolation ? "4-6" : "1-3");
    };
    // "linear probe (16 labels, k=1-3)", for a verdict's few words
    const auto brief = [&](const Side& s) {
        if (s.method == "zero-shot") return std::string("zero-shot (k=1-3)");
        return fmt::format("{} ({} labels, k={})", s.method, s.labelled, s.extrapolation ? "4-6" : "1-3");
    };
    enum class Order { Above, Below, AtLeast };  // the first side against the second
    const auto holds = [](Order order, double a, double b) {
        return order == Order::Above ? a > b : order == Order::Below ? a < b : a >= b;
    };
    const auto order_of = [&](const Spread& x, const Spread& y, Order order) {
        const auto seeds = static_cast<int>(std::max(x.values.size(), y.values.size()));
        return seed_order(holds(order, x.mean, y.mean), seeds,
                          [&](size_t i) { return holds(order, x.at(i), y.at(i)); });
    };
    // Where ours is not the lecture's finding, what was measured about it:
    // the same comparison on each control that ran both sides (when one of
    // them reads a pre-trained body), else, for a side at k = 4-6, its
    // accuracy at each k.
    const auto pretrained = [](const Side& s) { return s.method != "scratch" && s.method != "zero-shot"; };
    const auto measured = [&](const Side& first, Order order, const Side& second) {
        std::vector<std::string> controls;
        for (const ControlRun& c : diagnosis.controls) {
            if (!pretrained(first) && !pretrained(second)) break;
            const auto x = under(c, first), y = under(c, second);
            if (!x || !y) continue;
            const SeedOrder o = order_of(*x, *y, order);
            controls.push_back(fmt::format("with {} {:.3f} vs {:.3f} (holds in {} of {})", c.control.name, x->mean,
                                           y->mean, o.holding, count_of(o.seeds, "seed")));
        }
        if (!controls.empty()) return fmt::format("; {}", fmt::join(controls, ", "));
        for (const Side& s : {first, second})
            if (s.extrapolation && s.method != "zero-shot") {
                const MethodAccuracy& a = acc.at({s.method, s.labelled});
                return fmt::format("; per k, {} with {} labels scores {:.3f}, {:.3f}, {:.3f} at k = 4, 5, 6", s.method,
                                   s.labelled, a.per_k.at(3).mean, a.per_k.at(4).mean, a.per_k.at(5).mean);
            }
        return std::string();
    };
    // ours "a vs b" in the lecture's order; the reason gives the margin and,
    // where ours differs, what the controls measured.
    const auto finding = [&](std::string key, std::string statement, std::string lecture, const Side& first,
                             Order order, const Side& second) {
        const Spread x = over_seeds(first), y = over_seeds(second);
        const SeedOrder seen = order_of(x, y, order);
        const double a = x.mean, b = y.mean;
        std::string why =
            fmt::format("{}: {} {:.3f} against {} {:.3f}", seen.str(), describe(first), a, describe(second), b);
        if (!seen.clear()) why += measured(first, order, second) + quick_note;
        const char* relation = order == Order::Above ? "higher" : order == Order::Below ? "lower" : "at least as high";
        // With the lecture's figure where it fits the sentence's 30 words.
        std::string verdict;
        for (const std::string& lectures : {fmt::format(" (lecture {})", lecture), std::string()}) {
            verdict = fmt::format("Tested {} against {}: {:.3f} vs {:.3f}{}, {} in {} of {}: {}.", brief(first),
                                  brief(second), a, b, lectures, relation, seen.holding, count_of(seen.seeds, "seed"),
                                  outcome(seen.clear()));
            if (word_count(verdict) <= kVerdictWords) break;
        }
        return Claim{std::move(key),
                     std::move(statement),
                     std::move(lecture),
                     fmt::format("{:.3f} vs {:.3f}", a, b),
                     seen.clear(),
                     why,
                     ClaimKind::experiment,
                     verdict,
                     per_seed(describe(first), x, describe(second), y)};
    };
    const std::string probe = "linear probe", scratch = "scratch", ft3 = "full FT lr 1e-3", ft4 = "full FT lr 1e-4";
    const std::vector<Claim> findings{
        finding(fmt::format("probe_{}_beats_scratch_{}", few, few),
                fmt::format("With {} labels, a linear probe on the pre-trained GPT beats the same GPT trained from "
                            "scratch (k = 1-3)",
                            few),
                "1.000 vs 0.461", {probe, few}, Order::Above, {scratch, few}),
        finding(fmt::format("scratch_{}_extrapolates_worse", more),
                fmt::format("Trained from scratch on {} labels, the GPT does worse on longer prefixes than on those "
                            "as long as its training prefixes (k = 4-6 below k = 1-3)",
                            more),
                "0.587 vs 0.982", {scratch, more, true}, Order::Below, {scratch, more}),
        finding(fmt::format("probe_{}_extrapolates_better_than_scratch_{}", few, more),
                fmt::format("At k = 4-6, a linear probe with {} labels beats the GPT trained from scratch with {}", few,
                            more),
                "全对 (all right, at no stated k) vs 0.587", {probe, few, true}, Order::Above, {scratch, more, true}),
        finding(
            fmt::format("full_ft_{}_below_probe", few),
            fmt::format("With {} labels, full fine-tuning (lr 1e-3) does worse than the linear probe (k = 1-3)", few),
            "0.910 vs 1.000", {ft3, few}, Order::Below, {probe, few}),
        finding(fmt::format("full_ft_lr1e-4_{}_above_lr1e-3", few),
                fmt::format("With {} labels, full fine-tuning at lr 1e-4 does a little better than at lr 1e-3 "
                            "(k = 1-3)",
                            few),
                "a little > 0.910", {ft4, few}, Order::Above, {ft3, few}),
        finding(fmt::format("full_ft_{}_extrapolates_below_probe", more),
                fmt::format("With {} labels, full fine-tuning (lr 1e-3) extrapolates worse than the linear probe "
                            "(k = 4-6)",
                            more),
                "0.932 vs 1.000", {ft3, more, true}, Order::Below, {probe, more, true}),
        finding("zero_shot_matches_probe",
                fmt::format("Zero-shot, the language model itself (asked for the next word) does as well as the "
                            "linear probe with {} labels (k = 1-3)",
                            few),
                "1.000 vs 1.000", {"zero-shot"}, Order::AtLeast, {probe, few})};
    r.paragraph("The lecture's findings, on our means:");
    for (const Claim& c : findings) r.claim(c);

    int64_t probes = 0, probes_frozen = 0, trained = 0, trained_moved = 0;
    for (const SubjectRun& run : runs) {
        if (run.spec.method == Method::Probe) {
            ++probes;
            probes_frozen += run.body_unchanged;
        } else {
            ++trained;
            trained_moved += !run.body_unchanged;
        }
    }
    r.claim({"probe_leaves_body_bitwise_unchanged",
             "A linear probe trains only the classifier head: the pre-trained body stays as it was loaded", "",
             fmt::format("{} of {} probe runs", probes_frozen, probes), probes_frozen == probes,
             fmt::format("every parameter of the body compared bitwise after training: {} of {} probe runs unchanged",
                         probes_frozen, probes),
             ClaimKind::check,
             fmt::format("Tested each probe run's body bitwise after training: {} of {} unchanged: {}.", probes_frozen,
                         probes, outcome(probes_frozen == probes))});
    r.claim({"trained_bodies_changed", "Full fine-tuning and training from scratch update the body as well as the head",
             "", fmt::format("{} of {} runs", trained_moved, trained), trained_moved == trained,
             fmt::format("{} of the {} runs that are not probes changed their body", trained_moved, trained),
             ClaimKind::check,
             fmt::format("Tested the body after full fine-tuning and training from scratch: {} of {} runs changed it: "
                         "{}.",
                         trained_moved, trained, outcome(trained_moved == trained))});
}

std::string takeaway(const std::vector<SubjectRun>& runs, const ZeroShot& zero_shot, const std::vector<int64_t>& sizes,
                     const Diagnosis& diagnosis) {
    const auto acc = method_accuracies(runs);
    const int64_t few = sizes.front(), more = sizes.back();
    const double probe = acc.at({"linear probe", few}).in_distribution.mean;
    const double scratch = acc.at({"scratch", few}).in_distribution.mean;
    const double scratch_more = acc.at({"scratch", more}).in_distribution.mean;
    const double full_ft = acc.at({"full FT lr 1e-3", few}).in_distribution.mean;
    const double probe_beyond = acc.at({"linear probe", few}).extrapolation.mean;
    const double probe_longer =
        method_accuracies(extrapolation_control(diagnosis).runs).at({"linear probe", few}).extrapolation.mean;
    return fmt::format(
        "k=1-3 with {} labels: linear probe on the pre-trained GPT {:.3f}, full fine-tuning {:.3f}, "
        "the same GPT from scratch {:.3f} ({:.3f} with {} labels), zero-shot {:.3f}. {}",
        few, probe, full_ft, scratch, scratch_more, more, zero_shot.in_distribution.accuracy,
        probe > scratch ? fmt::format("Within the training lengths unlabelled pre-training learned the subject's "
                                      "number and a few labels only read it out; beyond them (k = 4-6) the same "
                                      "probe scores {:.3f}, and {:.3f} when pre-training saw k = 4-6 too.",
                                      probe_beyond, probe_longer)
                        : std::string("Here the pre-trained features did not beat training from scratch."));
}

}  // namespace

void part3_gpt_finetuning(Report& r, const Options& options) {
    const GptSetup setup = options.quick ? GptSetup::quick() : GptSetup::full();
    const farm::Language language = farm::Language::named(options.language);
    const farm::Corpora corpora = farm::make_corpora(kCorpusSeed, language);
    const std::vector<farm::Sentence> unlabelled = pretraining_corpus(corpora.train, setup.pretrain_sentences);
    const CachedLm gpt = pretrain(r, options, setup, unlabelled);

    // Every probe and fine-tuning run starts from its own copy of these numbers.
    const nn::Checkpoint pretrained = nn::load_safetensors(gpt.file.string());
    nn::LanguageModel reloaded(gpt.model->config(), 0);
    nn::load_into(reloaded, pretrained);
    const double reload_diff = max_parameter_diff(reloaded, *gpt.model);
    r.paragraph(
        "Each probe and fine-tuning run starts from its own copy of the pre-trained weights, read back from disk:");
    r.value("reload_max_abs_diff", reload_diff, "largest |read back - pre-trained| over every parameter");
    const auto agreement_sets = farm::make_agreement_sets(kAgreementSeed, language, setup.agreement_prefixes);
    const LmMeasures lm = report_gpt(r, options, setup, gpt, corpora, unlabelled, language, agreement_sets);

    r.paragraph(
        "§2.8 the downstream task: read a prefix up to the verb (\"the dogs near the cat behind the cow\") and say "
        "whether the subject is singular or plural. In the test sets every attractor noun has the subject's opposite "
        "number (\"copy the last noun\" scores 0); k = 4-6 is longer than any training prefix. Every method: "
        "a linear head $y = Wh + b$ on the final-norm hidden state $h$ at the last prefix position ($W$ is $2 \\times "
        "{}$: "
        "${} \\cdot 2 + 2 = {}$ parameters), {} full-batch Adam steps, "
        "no weight decay; a seed draws the head (and, from scratch, the body).",
        setup.config.d_model, setup.config.d_model, setup.config.d_model * 2 + 2, setup.steps);
    const SubjectData data =
        make_subject_data(setup.labelled, kTrainSetSeed, kTestSetSeed, setup.test_prefixes, language);
    report_data(r, setup.labelled, data);

    {
        // The classifier reads only each prefix's last row; last_hidden skips
        // the top layer's MLP elsewhere. The same numbers as the full forward:
        ag::NoGradGuard no_graph;
        const PackedPrefixes packed = pack_prefixes(data.train_sets.back());
        const ag::Tensor full = ag::index_select(gpt.model->hidden(packed.ids, packed.packing), 0, packed.last.index);
        r.value("last_hidden_minus_full_forward", ag::max_abs_diff(last_hidden(*gpt.model, packed), full));
    }

    const std::vector<SubjectRun> runs =
        train_subject_methods(subject_methods(), data, options.seeds, setup.steps, gpt.model->config(), pretrained);
    r.value("runs", static_cast<double>(runs.size()));
    const ZeroShot zero_shot{agreement(*gpt.model, data.test.in_distribution),
                             agreement(*gpt.model, data.test.extrapolation)};
    r.paragraph(
        "Zero-shot asks the language model itself: at the last prefix position, more probability on the 12 singular "
        "verb forms or on the 12 plural ones (the agreement test; p(correct) {:.3f} and {:.3f}).",
        zero_shot.in_distribution.p_correct, zero_shot.extrapolation.p_correct);
    r.value("zero_shot_p_correct_k1-3", zero_shot.in_distribution.p_correct);
    r.value("zero_shot_p_correct_k4-6", zero_shot.extrapolation.p_correct);
    report_results(r, options, runs, zero_shot, setup.labelled);
    report_per_k(r, runs, lm, setup.labelled, options.seeds, setup.agreement_prefixes);
    explain_extrapolation(r, unlabelled, data, setup.config);

    std::vector<ControlRun> controls;
    for (const PretrainingControl& control :
         pretraining_controls(setup.config, language, kCorpusSeed, setup.pretrain_sentences))
        controls.push_back(run_control(control, options.out, pretrain_options(setup), corpora.test, agreement_sets,
                                       data, options.seeds, setup.steps));
    const Diagnosis diagnosis = report_controls(r, options, setup, lm, runs, std::move(controls));

    const std::string quick_note =
        options.quick ? fmt::format(" (--quick: a tiny GPT and {} steps per run, numbers that only show the part runs)",
                                    setup.steps)
                      : "";
    report_probe_extrapolation(r, runs, lm, diagnosis, quick_note);
    report_findings(r, runs, zero_shot, setup.labelled, diagnosis, quick_note);
    r.takeaway(takeaway(runs, zero_shot, setup.labelled, diagnosis));
}

}  // namespace lessons::pretrain_finetune
