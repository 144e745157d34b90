#pragma once
// The training runs of parts 2 and 3 (§7.2, §7.3): which sentences the models
// learn from and are measured on, and how they are trained, at full size or
// with --quick. Full size is the lecture's: the 20,000 training sentences of
// farm::make_corpora(0, language), 5 epochs of lessons::train_lm's defaults,
// the 2,000 test sentences, and 500 agreement prefixes per k from
// make_agreement_sets(1, language); the language is --language's.
#include <cstdint>
#include <string>
#include <vector>

#include "data/farm_language.h"
#include "lessons/common/cli.h"
#include "lessons/common/model_cache.h"

namespace lessons::modern_transformer {

struct FarmRuns {
    farm::Language language = farm::Language::lecture();
    std::vector<farm::Sentence> train, test;
    std::vector<std::vector<farm::Sentence>> agreement;  // [k - 1], k = 1..6
    LmTrainOptions training;
    std::string description;  // one line: what the models are trained on
};

FarmRuns farm_runs(const Options& options);

// nn::LanguageModel(config, seed) for each of `models`, trained on
// runs.train with runs.training through the model cache in --out (so the
// default ModernLM, seed 0, is the one lessons 03 and 04 train and load
// too), those not cached yet side by side (cached_lms). Progress on stderr.
std::vector<CachedLm> trained(const Options& options, const FarmRuns& runs, const std::vector<LmRun>& models);

// The optimiser steps a run took (its per-step losses, all epochs).
int64_t optimiser_steps(const CachedLm& run);

// The longest sentence (in tokens, <s> and </s> included) and the largest k.
size_t longest_sentence(const std::vector<farm::Sentence>& sentences);
int largest_k(const std::vector<farm::Sentence>& sentences);

}  // namespace lessons::modern_transformer
