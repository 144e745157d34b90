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
#include "lessons/common/spread.h"
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

// §5.4 How the lesson reads the lecture's words on a gap between two
// models' test perplexities: "almost negligible" and "comparable" as a gap
// within kClose of the distance the model compared against still has to
// go (its distance above the grammar's own perplexity, the floor no model
// can pass), "a large loss" as a gap beyond it. A share of the perplexity
// itself would not do: 1% of MHA's is about half its whole distance to
// the floor (2.53 against 2.46 in the lecture's language), and more than
// all of it in the uniform one.
constexpr double kClose = 0.25;

// The gap from a model at perplexity `from` to one at `to`, read against
// `from`'s distance above the floor.
struct Gap {
    double gap = 0;       // to − from
    double share = 0;     // gap / (from − floor): how much of that distance it is
    bool close = false;   // |gap| < kClose · (from − floor)
    bool beyond = false;  // gap > kClose · (from − floor): a loss beyond the band
};
Gap gap_between(double from, double to, double floor);

// The gaps the lecture's findings are about, on the means over the seeds.
struct QualityGaps {
    Gap gqa, mqa, pooled;            // GQA, MQA, MHA mean-pooled into GQA: each against MHA
    Gap uptrained;                   // the uptrained model against the control, one epoch after pooling
    Gap uptrained_two_epochs;        // … after a second epoch for both
    double uptrained_minus_mha = 0;  // the uptrained model against the MHA model it came from
};

struct QualityRuns {
    std::vector<SeedRuns> seeds;            // seed 0 … seeds-1 (init seed of every model)
    std::array<double, Models> mean{};      // test perplexity, the mean over the seeds
    std::array<Spread, Models> over_seeds;  // each model's test perplexities, seed by seed, their min and max
    SecondEpoch second_epoch_mean;
    double grammar_perplexity = 0;  // the grammar's own on the test sentences: no model goes below it
    QualityGaps gaps;
};

// Every model for seed 0 … seeds-1. The MHA, GQA and MQA models are trained
// through the model cache in out_dir (so a second run loads them).
QualityRuns train_quality_runs(const QualitySetup& setup, const std::filesystem::path& out_dir, int seeds,
                               Progress* progress);

// §5.4 Uptraining step by step: each step's training loss, the mean over
// the seeds (every seed trains on the same batches in the same order),
// smoothed by a running mean of `window` steps (of fewer at a run's
// start). Steps are counted over the whole training: the MHA model's last
// epoch before it is pooled ends at step `conversion`, and the uptrained
// model and the control take the steps after it.
struct LossCurve {
    std::vector<double> step, loss;
};
struct UptrainingCurves {
    double conversion = 0;  // the last step before MHA's K/V heads are mean-pooled
    LossCurve mha;          // the MHA model's last epoch
    LossCurve uptrained, control;
};
UptrainingCurves uptraining_curves(const QualityRuns& runs, const QualitySetup& setup, size_t window);

}  // namespace lessons::gqa
