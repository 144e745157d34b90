#include "lessons/modern_transformer/farm_runs.h"

#include <algorithm>

#include <fmt/format.h>

#include "lessons/common/progress.h"
#include "lessons/common/report.h"

namespace lessons::modern_transformer {
namespace {

// --quick: a few hundred short sentences (k <= 2, so the longest is 14
// tokens and more learned position rows stay untrained), one epoch, and a
// few agreement prefixes per k.
constexpr size_t kQuickTrain = 320, kQuickTest = 200;
constexpr int kQuickMaxK = 2;
constexpr int64_t kQuickPrefixes = 32, kPrefixes = 500;

}  // namespace

FarmRuns farm_runs(const Options& options) {
    FarmRuns runs;
    runs.language = farm::Language::named(options.language);
    const farm::Corpora corpora = farm::make_corpora(0, runs.language);
    if (options.quick) {
        for (const farm::Sentence& s : corpora.train)
            if (s.k <= kQuickMaxK && runs.train.size() < kQuickTrain) runs.train.push_back(s);
        runs.test.assign(corpora.test.begin(), corpora.test.begin() + kQuickTest);
        runs.agreement = farm::make_agreement_sets(1, runs.language, kQuickPrefixes);
        runs.training.epochs = 1;
    } else {
        runs.train = corpora.train;
        runs.test = corpora.test;
        runs.agreement = farm::make_agreement_sets(1, runs.language, kPrefixes);
    }
    runs.description = fmt::format(
        "{} training sentences (the {} farm language, data seed 0{}), {} of AdamW lr {} in batches of {}; "
        "{} test sentences; {} agreement prefixes per k",
        group_thousands(static_cast<double>(runs.train.size())), runs.language.name(),
        options.quick ? fmt::format(", `--quick`: the first with k <= {}", kQuickMaxK) : "",
        count_of(runs.training.epochs, "epoch"), runs.training.lr, runs.training.batch_size,
        group_thousands(static_cast<double>(runs.test.size())), runs.agreement[0].size());
    return runs;
}

std::vector<CachedLm> trained(const Options& options, const FarmRuns& runs, const std::vector<LmRun>& models) {
    Progress progress;
    return cached_lms(options.out, models, runs.train, runs.training, options.quick ? nullptr : &progress);
}

int64_t optimiser_steps(const CachedLm& run) {
    int64_t steps = 0;
    for (const EpochLog& log : run.logs) steps += static_cast<int64_t>(log.step_losses.size());
    return steps;
}

size_t longest_sentence(const std::vector<farm::Sentence>& sentences) {
    size_t longest = 0;
    for (const farm::Sentence& s : sentences) longest = std::max(longest, s.ids.size());
    return longest;
}

int largest_k(const std::vector<farm::Sentence>& sentences) {
    int k = 0;
    for (const farm::Sentence& s : sentences) k = std::max(k, s.k);
    return k;
}

}  // namespace lessons::modern_transformer
