#pragma once
// One training step's gradient on two cores: a small model's batch is many
// small matrix products, and splitting each op between threads leaves the
// cores waiting at every join. So the batch is split instead.
//
// ShardedGradient computes the gradient of a language model's mean token
// cross-entropy over a packed batch in a fixed number of shards (groups of
// whole sequences with about the same number of tokens). Each shard runs
// forward and backward on its own replica of the model, whose parameters
// share the model's storage (same numbers, an optimiser step on the model
// is seen by the replicas; only the gradients are the replica's own), and
// the shards' gradients are added into the model's in shard order.
//
// Shard r's loss is its mean token loss weighted by its share of the
// batch's tokens, so the sum is the gradient of the batch's mean loss. The
// split does not depend on the thread count, and neither does the order of
// the final sum: 1 thread (shards one after the other) and 2 threads give
// bitwise the same gradients.
//
//     lessons::ShardedGradient sharded(model);   // 2 shards
//     adam.zero_grad();
//     const double loss = sharded.forward_backward(batch.packed_ids, batch.packed_targets, batch.starts);
//     adam.step();
#include <cstdint>
#include <memory>
#include <vector>

#include "autograd/profile.h"
#include "nn/language_model.h"

namespace lessons {

class ShardedGradient {
public:
    explicit ShardedGradient(nn::LanguageModel& model, int shards = 2);

    // Packed sequences (nn::Packing): ids and targets [N], sequence b is
    // rows starts[b] … starts[b+1]-1. Adds d(mean token cross-entropy)/dθ
    // into every trainable parameter's .grad() (as backward() would) and
    // returns the loss.
    double forward_backward(const ag::Tensor& ids, const ag::Tensor& targets, const std::vector<int64_t>& starts);

    // For bench_train --profile: where forward_backward's time goes. Once
    // set, every call adds to it each shard's seconds in forward (the model
    // and the loss) and in backward, with the engine's counters over each
    // (autograd/profile.h, on the shard's thread), and the seconds of the
    // final sum of the shards' gradients. Null (the default): no timing.
    struct Timing {
        struct Phase {
            double seconds = 0;
            ag::profile::Counters engine;
        };
        std::vector<Phase> forward, backward;  // one per shard
        double sum_seconds = 0;
    };
    void set_timing(Timing* timing);

private:
    nn::LanguageModel& model_;
    std::vector<std::unique_ptr<nn::LanguageModel>> replicas_;
    Timing* timing_ = nullptr;
};

}  // namespace lessons
