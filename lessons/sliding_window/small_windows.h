#pragma once
// §6.5 what a small window costs: two-layer ModernLMs with a window W
// (or full attention), trained on the same farm sentences in the same order,
// tested on subject-verb agreement with the subject 3k tokens before the
// verb. L layers reach L(W-1) tokens back (§6.3), here 2(W-1): a subject
// farther back is out of reach.
#include <cstdint>
#include <string>
#include <vector>

#include "data/farm_language.h"
#include "lessons/common/cli.h"
#include "lessons/common/evaluation.h"
#include "lessons/common/training.h"

namespace lessons::sliding_window {

// farm::make_corpora(0, language)'s sentences (--quick: the first 256
// training and 200 test sentences), 500 agreement prefixes per k = 1 … 6
// (--quick: 50) from farm::make_agreement_sets(1, language), train_lm's
// defaults (--quick: 1 epoch).
struct WindowData {
    std::vector<farm::Sentence> train, test;
    std::vector<std::vector<farm::Sentence>> agreement;  // [k - 1]
    LmTrainOptions training;
};
WindowData window_data(bool quick, const farm::Language& language);

// One window, seed by seed.
struct WindowRuns {
    int64_t window = 0;                                   // W; 0: full attention
    std::vector<std::string> status;                      // the model cache's: "trained", "loaded from …"
    std::vector<double> perplexity;                       // on data.test
    std::vector<std::vector<AgreementResult>> agreement;  // [seed][k - 1]
    // Per seed: the accuracy at k (or p(correct)).
    std::vector<double> per_seed(int64_t k, bool p_correct) const;
};

// For each window, nn::LMConfig::modern_lm() with that window for seeds
// 0 … options.seeds-1, trained on data.train through the model cache in
// options.out (a terminal shows progress).
std::vector<WindowRuns> train_windows(const Options& options, const WindowData& data,
                                      const std::vector<int64_t>& windows);

}  // namespace lessons::sliding_window
