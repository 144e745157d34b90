#pragma once
// §6.4 decoding a windowed ModernLM with Mistral's rolling buffer cache,
// one token per call, with the angle RoPE turns the new token's q and k by
// chosen apart from the token's true position (the rope_positions of
// nn::LanguageModel::forward_cached): the lecture's bug is rotating by the
// cache's length (or by the slot the key goes to) instead of the absolute
// position. The mask and the slot always use the true position.
#include <cstdint>
#include <string>
#include <vector>

#include "nn/language_model.h"

namespace lessons::sliding_window {

enum class RotateBy {
    AbsolutePosition,  // correct: position p is turned by p θ_i
    CacheLength,       // the bug: by the number of filled slots, min(p, W-1)
    Slot,              // the same bug another way: by p mod (W-1)
};
std::string describe(RotateBy rotate_by);

// The angle's position for the token at `position` (caches of W-1 slots).
int64_t rotation_position(RotateBy rotate_by, int64_t position, int64_t window);

// Logits [1, 1, V] of `token` at absolute `position`, read after the tokens
// at positions 0 … position-1 went through the same caches
// (model.new_caches(nn::CacheKind::Rolling): a RoPE model with a window W, W-1 slots per
// layer).
ag::Tensor decode_rolling(const nn::LanguageModel& model, int64_t token, int64_t position, RotateBy rotate_by,
                          std::vector<nn::KVCache>& caches);

}  // namespace lessons::sliding_window
