#include "lessons/gqa/quality.h"

#include <memory>
#include <utility>

#include "lessons/common/evaluation.h"
#include "lessons/common/model_cache.h"
#include "lessons/gqa/kv_heads.h"

namespace lessons::gqa {
namespace {

SeedRuns train_seed(const QualitySetup& setup, const std::filesystem::path& out_dir, uint64_t seed,
                    Progress* progress) {
    SeedRuns runs;
    std::unique_ptr<nn::LanguageModel> mha;
    for (Model m : {Mha, Gqa, Mqa}) {
        nn::LMConfig cfg = setup.base;
        cfg.n_kv_heads = kKvHeads[m];
        CachedLm run = cached_lm(out_dir, cfg, seed, setup.train, setup.training, progress);
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
    return runs;
}

}  // namespace

QualitySetup QualitySetup::full() {
    QualitySetup s;
    farm::Corpora corpora = farm::make_corpora(0);
    s.train = std::move(corpora.train);
    s.test = std::move(corpora.test);
    s.uptrain.epochs = 1;
    s.uptrain.lr = 1e-4;
    s.uptrain.shuffle_seed = s.training.shuffle_seed;
    s.uptrain.first_epoch = s.training.epochs;
    return s;
}

QualitySetup QualitySetup::quick() {
    QualitySetup s = full();
    s.base.d_model = 16;
    s.base.d_ff = 44;
    s.train.resize(400);
    s.test.resize(200);
    s.training.epochs = 1;
    s.uptrain.first_epoch = s.training.epochs;
    return s;
}

QualityRuns train_quality_runs(const QualitySetup& setup, const std::filesystem::path& out_dir, int seeds,
                               Progress* progress) {
    QualityRuns result;
    for (int seed = 0; seed < seeds; ++seed) {
        result.seeds.push_back(train_seed(setup, out_dir, static_cast<uint64_t>(seed), progress));
        for (size_t m = 0; m < Models; ++m)
            result.mean[m] += result.seeds.back().perplexity[m] / static_cast<double>(seeds);
    }
    result.grammar_perplexity = grammar_perplexity(setup.test);
    return result;
}

}  // namespace lessons::gqa
