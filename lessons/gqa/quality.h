#pragma once
// §5.4 what sharing K/V heads costs in quality, and uptraining: ModernLMs
// that differ only in their number of K/V heads (MHA 4, GQA 2, MQA 1),
// trained alike on the farm language; then the MHA model mean-pooled into
// GQA (convert_mha_to_gqa: heads 0,1 -> 0 and 2,3 -> 1) and trained one
// more epoch (Ainslie et al., 2023), against the fair control, the MHA
// model trained that same epoch on the same batches.
#include <array>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "data/farm_language.h"
#include "lessons/common/progress.h"
#include "lessons/common/training.h"
#include "nn/config.h"

namespace lessons::gqa {

// What the models learn from and how they are trained.
struct QualitySetup {
    nn::LMConfig base = nn::LMConfig::modern_lm();  // n_kv_heads set per model
    farm::Language language = farm::Language::lecture();
    std::vector<farm::Sentence> train, test;  // farm::make_corpora(0, language)
    LmTrainOptions training;                  // the models: 5 epochs at lr 1e-3
    // §5.4 uptraining and its control: one more epoch at lr 1e-4 with a
    // fresh AdamW, on the batches a 6th epoch of `training` would see.
    LmTrainOptions uptrain;
    // A control of that budget: a second such epoch for both (the batches a
    // 7th epoch would see), to see whether one epoch was enough.
    LmTrainOptions uptrain_again;

    static QualitySetup full(const farm::Language& language);
    static QualitySetup quick(const farm::Language& language);  // a small model (d = 16), 400 sentences, 1 epoch
};

// The models measured, in the order the lesson shows them.
enum Model { Mha, Gqa, Mqa, Pooled, Uptrained, Control, Models };
// Their K/V heads: MHA one per query head (4), GQA 2, MQA 1; the pooled and
// uptrained models are GQA, the control is MHA.
constexpr std::array<int64_t, Models> kKvHeads{4, 2, 1, 2, 2, 4};

// One seed's runs.
// The uptrained model and its control after a second uptraining epoch.
struct SecondEpoch {
    double uptrained = 0, control = 0;  // test perplexity
};

struct SeedRuns {
    std::array<double, Models> perplexity{};  // on the test sentences
    SecondEpoch second_epoch;
    std::array<std::vector<double>, Models> step_losses;  // every training step's loss; none for Pooled
    std::array<std::string, Models> status;               // the model cache's word on Mha, Gqa and Mqa
};

struct QualityRuns {
    std::vector<SeedRuns> seeds;        // seed 0 … seeds-1 (init seed of every model)
    std::array<double, Models> mean{};  // test perplexity, the mean over the seeds
    SecondEpoch second_epoch_mean;
    double grammar_perplexity = 0;  // the grammar's own on the test sentences: no model goes below it
};

// Every model for seed 0 … seeds-1. The MHA, GQA and MQA models are trained
// through the model cache in out_dir (so a second run loads them).
QualityRuns train_quality_runs(const QualitySetup& setup, const std::filesystem::path& out_dir, int seeds,
                               Progress* progress);

}  // namespace lessons::gqa
