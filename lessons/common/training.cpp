#include "lessons/common/training.h"

#include <chrono>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "lessons/common/sharded_gradient.h"
#include "nn/optim.h"
#include "nn/schedule.h"

namespace lessons {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

}  // namespace

uint64_t epoch_shuffle_seed(uint64_t shuffle_seed, int64_t epoch_index) {
    // One SplitMix64 step spreads nearby seeds apart, so run 1's first epoch
    // does not replay run 0's second one.
    return ag::Generator(shuffle_seed).next_u64() + static_cast<uint64_t>(epoch_index);
}

std::vector<double> step_losses(const std::vector<EpochLog>& logs) {
    std::vector<double> losses;
    for (const EpochLog& log : logs) losses.insert(losses.end(), log.step_losses.begin(), log.step_losses.end());
    return losses;
}

std::vector<EpochLog> train_lm(nn::LanguageModel& model, const std::vector<farm::Sentence>& train,
                               const LmTrainOptions& options, Progress* progress) {
    if (options.epochs < 0 || options.batch_size < 1 || train.empty())
        throw std::invalid_argument(fmt::format("train_lm: {} epochs of batches of {} from {} sentences",
                                                options.epochs, options.batch_size, train.size()));
    const int64_t n = static_cast<int64_t>(train.size());
    const int64_t steps_per_epoch = (n + options.batch_size - 1) / options.batch_size;

    optim::AdamW adam(model.trainable_parameters(), options.lr, options.beta1, options.beta2, options.eps,
                      options.weight_decay);
    std::unique_ptr<optim::Schedule> schedule;
    if (options.cosine)
        schedule = std::make_unique<optim::WarmupCosine>(options.lr, options.lr_min, options.warmup_steps,
                                                         options.epochs * steps_per_epoch);
    else
        schedule = std::make_unique<optim::Constant>(options.lr);

    ShardedGradient sharded(model);  // two shards per batch, one per core (sharded_gradient.h)
    if (progress) progress->begin(options.epochs, steps_per_epoch);
    std::vector<EpochLog> logs;
    int64_t step = 0;  // optimiser steps of this call, for the schedule
    for (int64_t e = 0; e < options.epochs; ++e) {
        ag::Generator order(epoch_shuffle_seed(options.shuffle_seed, options.first_epoch + e));
        const std::vector<farm::LmBatch> batches = farm::make_lm_batches(train, options.batch_size, &order);

        const Clock::time_point start = Clock::now();
        double loss_sum = 0;  // Σ over batches of mean loss × its tokens = Σ per-token losses
        int64_t tokens = 0;
        std::vector<double> step_losses;
        step_losses.reserve(batches.size());
        for (size_t b = 0; b < batches.size(); ++b) {
            const farm::LmBatch& batch = batches[b];
            // The batch's sentences packed end to end without padding (the
            // padded rows would be masked out of the loss anyway, and a pad
            // never changes a real token's output): the loss is the mean
            // cross-entropy of its N real tokens.
            adam.zero_grad();
            const double value = sharded.forward_backward(batch.packed_ids, batch.packed_targets, batch.starts);
            if (!std::isfinite(std::exp(value)))
                throw Diverged(
                    fmt::format("training diverged at epoch {}, step {} of {}: the loss is {:g}, its "
                                "perplexity {:g}",
                                e + 1, b + 1, batches.size(), value, std::exp(value)));
            adam.lr = schedule->lr(step++);
            sharded.step(adam);

            step_losses.push_back(value);
            loss_sum += value * static_cast<double>(batch.tokens);
            tokens += batch.tokens;
            if (progress)
                progress->step(e + 1, static_cast<int64_t>(b) + 1, value,
                               static_cast<double>(tokens) / seconds_since(start));
        }
        EpochLog log;
        log.epoch = e + 1;
        log.train_loss = loss_sum / static_cast<double>(tokens);
        log.seconds = seconds_since(start);
        log.tokens_per_second = static_cast<double>(tokens) / log.seconds;
        log.step_losses = std::move(step_losses);
        if (progress) progress->epoch_done(log.epoch, log.train_loss, log.tokens_per_second, log.seconds);
        logs.push_back(log);
    }
    return logs;
}

}  // namespace lessons
