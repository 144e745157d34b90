#pragma once
// Batches of farm-language sentences as tensors of ids (doubles holding
// integers, as ag::embedding and ag::cross_entropy take them).
//
// Every batch is right-padded with PAD to its own longest row. For language
// modelling the padded positions are masked out of the loss: their target is
// IGNORE_INDEX, which ag::cross_entropy skips. Perplexity counts every
// predicted token after <s>, </s> included, <pad> excluded (docs/farm_language.md).
//
// Order: with shuffle == nullptr the sentences keep their order; otherwise
// they are taken in the order farm::permutation(n, *shuffle) gives
// (data/shuffle.h), one permutation per call. The last batch may be smaller.
#include <cstdint>
#include <vector>

#include "autograd/generator.h"
#include "autograd/tensor.h"
#include "data/farm_language.h"

namespace farm {

constexpr int64_t IGNORE_INDEX = -100;  // ag::cross_entropy's default ignore_index

// A sentence of length L gives L-1 input/target pairs: ids[t] = s[t],
// targets[t] = s[t+1], t = 0..L-2.
struct LmBatch {
    ag::Tensor ids;      // [B, T] inputs, right-padded with PAD; T = longest L - 1
    ag::Tensor targets;  // [B, T] next tokens, IGNORE_INDEX where ids is padding
    int64_t tokens = 0;  // targets that are not IGNORE_INDEX: Σ (L - 1)
    // The same rows without the padding, laid end to end: row b's L_b - 1
    // inputs are packed_ids[starts[b] .. starts[b+1]). A model that only
    // computes real rows does a third less work on this corpus, and its
    // loss is the same: padded targets are ignored anyway.
    ag::Tensor packed_ids;        // [tokens]
    ag::Tensor packed_targets;    // [tokens]
    std::vector<int64_t> starts;  // [B + 1], starts[0] = 0, starts[B] = tokens
};
// Sentences must have at least 2 tokens; batch_size >= 1.
std::vector<LmBatch> make_lm_batches(const std::vector<Sentence>& sentences, int64_t batch_size,
                                     ag::Generator* shuffle = nullptr);

// Prefixes for the subject-number classifier (§2.8) and the agreement test
// (§6.5): the model reads each row and is read out at its last real token.
struct PrefixBatch {
    ag::Tensor ids;             // [B, T] right-padded with PAD; T = longest prefix
    std::vector<int64_t> last;  // [B] index of each row's last real token (L - 1)
    std::vector<int> labels;    // [B] subject_plural: 0 singular, 1 plural
};
// Prefixes must be non-empty; batch_size >= 1.
std::vector<PrefixBatch> make_prefix_batches(const std::vector<Sentence>& prefixes, int64_t batch_size,
                                             ag::Generator* shuffle = nullptr);

}  // namespace farm
