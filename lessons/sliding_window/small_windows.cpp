#include "lessons/sliding_window/small_windows.h"

#include "lessons/common/model_cache.h"
#include "lessons/common/progress.h"

namespace lessons::sliding_window {

WindowData window_data(bool quick, const farm::Language& language) {
    const farm::Corpora corpora = farm::make_corpora(0, language);
    const int64_t n_train = quick ? 256 : static_cast<int64_t>(corpora.train.size());
    const int64_t n_test = quick ? 200 : static_cast<int64_t>(corpora.test.size());
    WindowData data;
    data.train.assign(corpora.train.begin(), corpora.train.begin() + n_train);
    data.test.assign(corpora.test.begin(), corpora.test.begin() + n_test);
    data.agreement = farm::make_agreement_sets(1, language, quick ? 50 : 500);
    if (quick) data.training.epochs = 1;
    return data;
}

std::vector<double> WindowRuns::per_seed(int64_t k, bool p_correct) const {
    std::vector<double> v;
    for (const auto& per_k : agreement) {
        const AgreementResult& a = per_k[static_cast<size_t>(k - 1)];
        v.push_back(p_correct ? a.p_correct : a.accuracy);
    }
    return v;
}

std::vector<WindowRuns> train_windows(const Options& options, const WindowData& data,
                                      const std::vector<int64_t>& windows) {
    std::vector<LmRun> specs;  // every window's seeds, trained side by side
    for (const int64_t W : windows)
        for (int seed = 0; seed < options.seeds; ++seed) {
            specs.push_back({nn::LMConfig::modern_lm(), static_cast<uint64_t>(seed)});
            specs.back().config.window = W;
        }
    Progress progress;
    const std::vector<CachedLm> runs = cached_lms(options.out, specs, data.train, data.training, &progress);
    std::vector<WindowRuns> results;
    size_t next = 0;
    for (const int64_t W : windows) {
        WindowRuns result;
        result.window = W;
        for (int seed = 0; seed < options.seeds; ++seed) {
            const CachedLm& run = runs[next++];
            result.status.push_back(run.status);
            result.perplexity.push_back(perplexity(*run.model, data.test));
            result.agreement.push_back(agreement_per_k(*run.model, data.agreement));
        }
        results.push_back(std::move(result));
    }
    return results;
}

}  // namespace lessons::sliding_window
