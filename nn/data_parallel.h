#pragma once
// Two cores on one small model: data parallelism with a fixed split.
//
// A batch of a small model is many small matrix products; splitting each
// op between threads leaves the cores waiting at every join. Instead, each
// batch is cut into a fixed number of shards (groups of whole sequences
// with about the same number of tokens),
// each shard runs forward and backward on its own replica of the model
// (same numbers: the replicas' parameters share the model's storage, only
// their gradients are their own), and the shards' gradients are added in
// shard order into the model's.
//
// Shard r's loss is its mean token loss weighted by its share of the
// batch's tokens, so the sum is the gradient of the batch's mean loss. The
// split does not depend on the thread count, and neither does the order of
// the final sum: 1 thread (shards one after the other) and 2 threads give
// bitwise the same gradients.
#include <memory>
#include <vector>

#include "nn/language_model.h"

namespace nn {

class DataParallel {
public:
    explicit DataParallel(LanguageModel& model, int shards = 2);

    // Packed sequences (nn::Packing): ids and targets [N], sequence b is
    // rows starts[b] … starts[b+1]-1. Adds d(mean token cross-entropy)/dθ
    // into every trainable parameter's .grad() (as backward() would) and
    // returns the loss.
    double forward_backward(const Tensor& ids, const Tensor& targets, const std::vector<int64_t>& starts);

private:
    LanguageModel& model_;
    std::vector<std::unique_ptr<LanguageModel>> replicas_;
};

}  // namespace nn
