#include "lessons/modern_transformer/gpt_vs_modern.h"

#include <utility>
#include <vector>

#include "lessons/common/evaluation.h"

namespace lessons::modern_transformer {

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
    }
    return result;
}

}  // namespace lessons::modern_transformer
