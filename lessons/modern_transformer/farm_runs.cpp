#include "lessons/modern_transformer/farm_runs.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "lessons/common/progress.h"

namespace lessons::modern_transformer {
namespace {

// --quick: a few hundred short sentences (k <= 2, so the longest is 14
// tokens and more learned position rows stay untrained), one epoch, and a
// few agreement prefixes per k.
constexpr size_t kQuickTrain = 320, kQuickTest = 200;
constexpr int kQuickMaxK = 2;
constexpr int64_t kQuickPrefixes = 32, kPrefixes = 500;

// farm_language.md: k is uniform over 0 … kKs - 1 in every corpus.
constexpr int kKs = 4;

}  // namespace

FarmRuns farm_runs(const Options& options) {
    const farm::Corpora corpora = farm::make_corpora(0);
    FarmRuns runs;
    if (options.quick) {
        for (const farm::Sentence& s : corpora.train)
            if (s.k <= kQuickMaxK && runs.train.size() < kQuickTrain) runs.train.push_back(s);
        runs.test.assign(corpora.test.begin(), corpora.test.begin() + kQuickTest);
        runs.agreement = farm::make_agreement_sets(1, kQuickPrefixes);
        runs.training.epochs = 1;
    } else {
        runs.train = corpora.train;
        runs.test = corpora.test;
        runs.agreement = farm::make_agreement_sets(1, kPrefixes);
    }
    runs.description = fmt::format(
        "{} training sentences (farm corpus, data seed 0{}), {} epoch(s) of AdamW lr {} in batches of {}; "
        "{} test sentences; {} agreement prefixes per k",
        group_thousands(static_cast<double>(runs.train.size())),
        options.quick ? fmt::format(", --quick: the first with k <= {}", kQuickMaxK) : "", runs.training.epochs,
        runs.training.lr, runs.training.batch_size, group_thousands(static_cast<double>(runs.test.size())),
        runs.agreement[0].size());
    return runs;
}

CachedLm trained(const Options& options, const FarmRuns& runs, const nn::LMConfig& config, uint64_t seed) {
    Progress progress;
    return cached_lm(options.out, config, seed, runs.train, runs.training, options.quick ? nullptr : &progress);
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

// Σ -log p over a sentence's predicted tokens (everything after <s>), with
// the grammar's own probabilities:
//   the | <s>: 1                      SUBJ, a PP's NOUN, an object NOUN: 1/24
//   after j PPs: another PP  P(k > j | k >= j) = (kKs-1-j)/(kKs-j), then PREP 1/6, "the" 1
//                the VERB    P(k = j | k >= j) = 1/(kKs-j), then its lemma 1/12 (its form is the subject's)
//   after the VERB: "the" NOUN 1/2 · 1/24;  MASS 1/4 · 1/5;  no object 1/4, then
//   an adverb 1/2 · 1/5 or </s> 1/2 (after an adverb, </s> is certain).
double sentence_nll(const farm::Sentence& s) {
    const std::vector<int64_t>& t = s.ids;
    double log_p = std::log(1.0 / farm::N_NOUNS);  // "the" then SUBJ
    for (int j = 0; j < s.k; ++j)
        log_p += std::log(static_cast<double>(kKs - 1 - j) / (kKs - j) / farm::N_PREPS / farm::N_NOUNS);
    log_p += std::log(1.0 / (kKs - s.k) / farm::N_LEMMAS);
    size_t i = 3 + 3 * static_cast<size_t>(s.k) + 1;  // after the verb
    if (t.at(i) == farm::THE) {
        log_p += std::log(0.5 / farm::N_NOUNS);
        i += 2;
    } else if (farm::is_mass(t.at(i))) {
        log_p += std::log(0.25 / farm::N_MASS);
        i += 1;
    } else {
        log_p += std::log(0.25);
    }
    log_p += std::log(farm::is_adverb(t.at(i)) ? 0.5 / farm::N_ADVS : 0.5);  // then </s> with 1
    return -log_p;
}

double grammar_perplexity(const std::vector<farm::Sentence>& sentences) {
    double nll = 0;
    size_t tokens = 0;
    for (const farm::Sentence& s : sentences) {
        nll += sentence_nll(s);
        tokens += s.ids.size() - 1;
    }
    return std::exp(nll / static_cast<double>(tokens));
}

}  // namespace lessons::modern_transformer
