#include "lessons/modern_transformer/gpt_vs_modern.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "lessons/common/evaluation.h"

namespace lessons::modern_transformer {
namespace {

// The per-step losses of every epoch, averaged over blocks of `block` steps.
LossCurve loss_curve(const std::vector<EpochLog>& logs, size_t block) {
    const std::vector<double> losses = step_losses(logs);
    LossCurve curve;
    curve.block = block;
    for (size_t start = 0; start < losses.size(); start += block) {
        const size_t end = std::min(losses.size(), start + block);
        double sum = 0;
        for (size_t i = start; i < end; ++i) sum += losses[i];
        curve.steps.push_back(static_cast<double>(start + end + 1) / 2.0);
        curve.losses.push_back(sum / static_cast<double>(end - start));
    }
    return curve;
}

}  // namespace

GptVsModern compare_gpt_and_modern(const Options& options, const FarmRuns& runs, int seeds) {
    const std::array<std::pair<std::string, nn::LMConfig>, 2> recipes{
        {{"GPT", nn::LMConfig::gpt()}, {"ModernLM", nn::LMConfig::modern_lm()}}};
    GptVsModern result;
    result.floor = grammar_perplexity(runs.test, runs.language);
    result.floor_train = grammar_perplexity(runs.train, runs.language);
    std::vector<LmRun> models;  // seed by seed: GPT, ModernLM
    for (int seed = 0; seed < seeds; ++seed)
        for (const auto& recipe : recipes) models.push_back({recipe.second, static_cast<uint64_t>(seed)});
    std::vector<CachedLm> trained_runs = trained(options, runs, models);
    for (size_t m = 0; m < recipes.size(); ++m) {
        RecipeRun& model = result.models[m];
        model.name = recipes[m].first;
        for (int seed = 0; seed < seeds; ++seed)
            model.test_perplexity.push_back(
                perplexity(*trained_runs[recipes.size() * static_cast<size_t>(seed) + m].model, runs.test));
        model.run = std::move(trained_runs[m]);
        model.parameters = model.run.model->num_parameters();
        for (const EpochLog& log : model.run.logs) model.seconds += log.seconds;
        const size_t steps = static_cast<size_t>(optimiser_steps(model.run));
        model.curve = loss_curve(model.run.logs, std::max<size_t>(1, steps / 125));
    }
    return result;
}

}  // namespace lessons::modern_transformer
