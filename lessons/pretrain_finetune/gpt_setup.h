#pragma once
// Part 3's GPT setup (§2.8), full and --quick, and its data seeds: part 2
// (§2.6-2.7) counts the same pre-training corpus and labelled sets.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "nn/language_model.h"

namespace lessons::pretrain_finetune {

// The data seeds: each maker gets its own (farm_language.h). Corpora and
// agreement sets as farm_lm and the other lessons make them.
constexpr uint64_t kCorpusSeed = 0, kAgreementSeed = 1, kTrainSetSeed = 2, kTestSetSeed = 3;

struct GptSetup {
    nn::LMConfig config;
    size_t pretrain_sentences = 0;  // of the 20,000 (0: all)
    int64_t pretrain_epochs = 0;
    std::vector<int64_t> labelled;  // training-set sizes
    int64_t steps = 0;
    int64_t test_prefixes = 0, agreement_prefixes = 0;  // per set

    static GptSetup full() { return {nn::LMConfig::gpt(), 0, 5, {16, 256}, 200, 500, 500}; }
    // A GPT of one layer, d = 16, trained one epoch on 300 sentences; 10
    // steps per run; 40 test prefixes per set.
    static GptSetup quick() {
        nn::LMConfig tiny = nn::LMConfig::gpt();
        tiny.d_model = 16;
        tiny.n_heads = tiny.n_kv_heads = 2;
        tiny.n_layers = 1;
        tiny.d_ff = 4 * tiny.d_model;
        return {tiny, 300, 1, {16, 256}, 10, 40, 40};
    }
};

}  // namespace lessons::pretrain_finetune
