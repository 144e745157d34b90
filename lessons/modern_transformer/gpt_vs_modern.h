#pragma once
// §7.2 lecture 2's GPT (learned positions, LayerNorm, GELU MLP, biases)
// against the ModernLM (RoPE, RMSNorm, SwiGLU, GQA, no biases): same size
// class, initialisation seeds 0 … seeds-1 (seed i of ModernLM is part 3's
// RoPE model of seed i), the same sentences in the same order.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "lessons/modern_transformer/farm_runs.h"

namespace lessons::modern_transformer {

struct RecipeRun {
    std::string name;  // "GPT" or "ModernLM"
    CachedLm run;      // seed 0's, trained on runs.train through the model cache
    int64_t parameters = 0;
    std::vector<double> test_perplexity;  // seed by seed
    double seconds = 0;                   // seed 0's training run, all epochs
};

struct GptVsModern {
    std::array<RecipeRun, 2> models;  // GPT, then ModernLM
    // The grammar's own perplexity of the test sentences (its exact
    // probabilities, token by token): no model does better on average.
    double floor = 0;
    double floor_train = 0;  // the same on the training sentences
};
GptVsModern compare_gpt_and_modern(const Options& options, const FarmRuns& runs, int seeds);

}  // namespace lessons::modern_transformer
