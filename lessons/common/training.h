#pragma once
// The training loop the lessons and farm_lm share: language-model
// pre-training on the farm corpus.
//
//     const farm::Corpora corpora = farm::make_corpora(0);
//     nn::LanguageModel model(nn::LMConfig::modern_lm(), seed);
//     Progress progress;                                  // on stderr
//     const auto logs = train_lm(model, corpora.train, LmTrainOptions{}, &progress);
//     fmt::print("{:.4f}\n", perplexity(model, corpora.test));   // evaluation.h
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "data/batching.h"
#include "data/farm_language.h"
#include "lessons/common/progress.h"
#include "nn/language_model.h"

namespace lessons {

// Language-model training as the lecture's experiments run it: batches of
// 32 sentences, AdamW (lr 1e-3, betas 0.9 / 0.95, weight decay 0.01) and a
// constant learning rate.
struct LmTrainOptions {
    int64_t epochs = 5;
    int64_t batch_size = 32;
    double lr = 1e-3, beta1 = 0.9, beta2 = 0.95, eps = 1e-8, weight_decay = 0.01;

    // Batch order. Each epoch takes the sentences in a new random order: the
    // epoch with index i (0-based, counted over runs, see first_epoch) draws
    // it from ag::Generator(ag::Generator(shuffle_seed).next_u64() + i).
    // The same seed and epoch index give the same batches, whatever model
    // is trained on them.
    uint64_t shuffle_seed = 0;
    // The index of this call's first epoch: a second call that continues a
    // run of 5 epochs passes 5 to get the batch order a 6th epoch would
    // have had, and two models given the same first_epoch see the same
    // batches in the same order (§5.4: uptraining against its control).
    int64_t first_epoch = 0;

    // Learning-rate schedule over this call's steps: constant (the default),
    // or with `cosine` a linear warmup over warmup_steps then a half cosine
    // from lr down to lr_min at the last step (optim::WarmupCosine).
    bool cosine = false;
    int64_t warmup_steps = 0;
    double lr_min = 0.0;
};

struct EpochLog {
    int64_t epoch = 0;      // 1-based, within this call
    double train_loss = 0;  // token-weighted mean cross-entropy over the epoch
    double seconds = 0;
    double tokens_per_second = 0;     // non-pad target tokens / seconds (docs/reference_figures.md)
    std::vector<double> step_losses;  // each batch's mean loss, in order (the loss curve)
};

// Every batch's loss of a run, its epochs one after another (the loss curve).
std::vector<double> step_losses(const std::vector<EpochLog>& logs);

// Training diverged (a learning rate far too large: --lr 1000): a batch's
// loss whose perplexity exp(loss) is no longer a number, NaN or infinite
// (the loss NaN, infinite or above log(DBL_MAX) = 709.78 nats). Each
// further step only spoils the model more, and a checkpoint saved from it
// measures `inf`; train_lm stops at once with this error.
struct Diverged : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Trains `model` in place for options.epochs epochs on `train` and returns
// one log per epoch (Diverged, see above, stops it). Each call builds a fresh AdamW over the model's
// trainable parameters (§5.4: "one more epoch at lr 1e-4 with a fresh
// AdamW" is a second call). The loss of a batch is the mean cross-entropy
// over its non-pad targets, computed on the batch packed without padding
// (LanguageModel::forward with a Packing: the same loss, a third less work). `progress` (may be null) shows the run.
std::vector<EpochLog> train_lm(nn::LanguageModel& model, const std::vector<farm::Sentence>& train,
                               const LmTrainOptions& options, Progress* progress = nullptr);

// The id of an epoch's batch-order generator (see LmTrainOptions).
uint64_t epoch_shuffle_seed(uint64_t shuffle_seed, int64_t epoch_index);

}  // namespace lessons
