#include "lessons/gqa/quality.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <memory>
#include <utility>
#include <vector>

#include "lessons/common/evaluation.h"
#include "lessons/common/model_cache.h"
#include "lessons/gqa/kv_heads.h"

namespace lessons::gqa {
namespace {

// The models one seed trains (MHA, GQA, MQA), for cached_lms.
std::vector<LmRun> seed_models(const QualitySetup& setup, uint64_t seed) {
    std::vector<LmRun> models;
    for (Model m : {Mha, Gqa, Mqa}) {
        models.push_back({setup.base, seed});
        models.back().config.n_kv_heads = kKvHeads[m];
    }
    return models;
}

// One seed's results; `trained` holds its models (seed_models' order).
SeedRuns train_seed(const QualitySetup& setup, std::vector<CachedLm> trained, Progress* progress) {
    SeedRuns runs;
    std::unique_ptr<nn::LanguageModel> mha;
    for (Model m : {Mha, Gqa, Mqa}) {
        CachedLm& run = trained[static_cast<size_t>(m)];
        runs.status[m] = run.status;
        runs.perplexity[m] = perplexity(*run.model, setup.test);
        runs.step_losses[m] = step_losses(run.logs);
        if (m == Mha) mha = std::move(run.model);
    }
    // §5.4 uptraining: pool, measure, train one more epoch; the control
    // trains the MHA model itself that epoch, on the same batches.
    const auto pooled = convert_mha_to_gqa(*mha, kKvHeads[Pooled]);
    runs.perplexity[Pooled] = perplexity(*pooled, setup.test);
    runs.step_losses[Uptrained] = step_losses(train_lm(*pooled, setup.train, setup.uptrain, progress));
    runs.perplexity[Uptrained] = perplexity(*pooled, setup.test);
    runs.step_losses[Control] = step_losses(train_lm(*mha, setup.train, setup.uptrain, progress));
    runs.perplexity[Control] = perplexity(*mha, setup.test);
    // The control of the budget: one epoch more for both.
    train_lm(*pooled, setup.train, setup.uptrain_again, progress);
    train_lm(*mha, setup.train, setup.uptrain_again, progress);
    runs.second_epoch = {perplexity(*pooled, setup.test), perplexity(*mha, setup.test)};
    return runs;
}

}  // namespace

QualitySetup QualitySetup::full(const farm::Language& language) {
    QualitySetup s;
    s.language = language;
    farm::Corpora corpora = farm::make_corpora(0, language);
    s.train = std::move(corpora.train);
    s.test = std::move(corpora.test);
    s.uptrain.epochs = 1;
    s.uptrain.lr = 1e-4;
    s.uptrain.shuffle_seed = s.training.shuffle_seed;
    s.uptrain.first_epoch = s.training.epochs;
    s.uptrain_again = s.uptrain;
    s.uptrain_again.first_epoch = s.uptrain.first_epoch + s.uptrain.epochs;
    return s;
}

QualitySetup QualitySetup::quick(const farm::Language& language) {
    QualitySetup s = full(language);
    s.base.d_model = 16;
    s.base.d_ff = 44;
    s.train.resize(400);
    s.test.resize(200);
    s.training.epochs = 1;
    s.uptrain.first_epoch = s.training.epochs;
    s.uptrain_again.first_epoch = s.uptrain.first_epoch + s.uptrain.epochs;
    return s;
}

Gap gap_between(double from, double to, double floor) {
    const double gap = to - from, distance = from - floor;
    return {gap, gap / distance, std::fabs(gap) < kClose * distance, gap > kClose * distance};
}

QualityRuns train_quality_runs(const QualitySetup& setup, const std::filesystem::path& out_dir, int seeds,
                               Progress* progress) {
    std::vector<LmRun> models;  // every seed's, trained side by side
    for (int seed = 0; seed < seeds; ++seed)
        for (const LmRun& run : seed_models(setup, static_cast<uint64_t>(seed))) models.push_back(run);
    std::vector<CachedLm> trained = cached_lms(out_dir, models, setup.train, setup.training, progress);
    QualityRuns result;
    for (int seed = 0; seed < seeds; ++seed) {
        const auto first = std::make_move_iterator(trained.begin() + 3 * seed);  // this seed's MHA, GQA, MQA
        result.seeds.push_back(train_seed(setup, {first, first + 3}, progress));
        const SeedRuns& last = result.seeds.back();
        for (size_t m = 0; m < Models; ++m) result.mean[m] += last.perplexity[m] / static_cast<double>(seeds);
        result.second_epoch_mean.uptrained += last.second_epoch.uptrained / static_cast<double>(seeds);
        result.second_epoch_mean.control += last.second_epoch.control / static_cast<double>(seeds);
    }
    for (size_t m = 0; m < Models; ++m) {
        std::vector<double> per_seed;
        for (const SeedRuns& s : result.seeds) per_seed.push_back(s.perplexity[m]);
        result.over_seeds[m] = spread(per_seed);
    }
    const double floor = result.grammar_perplexity = grammar_perplexity(setup.test, setup.language);
    const std::array<double, Models>& mean = result.mean;
    const SecondEpoch& again = result.second_epoch_mean;
    QualityGaps& gaps = result.gaps;
    gaps.gqa = gap_between(mean[Mha], mean[Gqa], floor);
    gaps.mqa = gap_between(mean[Mha], mean[Mqa], floor);
    gaps.pooled = gap_between(mean[Mha], mean[Pooled], floor);
    gaps.uptrained = gap_between(mean[Control], mean[Uptrained], floor);
    gaps.uptrained_two_epochs = gap_between(again.control, again.uptrained, floor);
    gaps.uptrained_minus_mha = mean[Uptrained] - mean[Mha];
    return result;
}

UptrainingCurves uptraining_curves(const QualityRuns& runs, const QualitySetup& setup, size_t window) {
    // Model m's run, the mean over the seeds step by step, smoothed; its
    // steps from `keep` on, numbered from `first` on.
    const auto curve = [&](Model m, size_t keep, double first) {
        const size_t steps = runs.seeds.front().step_losses[m].size();
        std::vector<double> mean(steps, 0.0);
        for (const SeedRuns& s : runs.seeds)
            for (size_t i = 0; i < steps; ++i) mean[i] += s.step_losses[m][i] / static_cast<double>(runs.seeds.size());
        LossCurve c;
        double sum = 0;
        for (size_t i = 0; i < steps; ++i) {
            sum += mean[i];
            if (i >= window) sum -= mean[i - window];
            if (i < keep) continue;
            c.step.push_back(first + static_cast<double>(i - keep));
            c.loss.push_back(sum / static_cast<double>(std::min(i + 1, window)));
        }
        return c;
    };
    const size_t trained = runs.seeds.front().step_losses[Mha].size();
    const size_t last_epoch = trained - trained / static_cast<size_t>(setup.training.epochs);
    UptrainingCurves curves;
    curves.conversion = static_cast<double>(trained);
    curves.mha = curve(Mha, last_epoch, static_cast<double>(last_epoch + 1));
    curves.uptrained = curve(Uptrained, 0, curves.conversion + 1);
    curves.control = curve(Control, 0, curves.conversion + 1);
    return curves;
}

}  // namespace lessons::gqa
