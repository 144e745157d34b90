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

// §6.4 one decoding's logits, position by position, against the full
// forward pass over the same tokens.
struct LogitsComparison {
    double max_diff = 0.0;       // max |logits - full| over positions and vocabulary
    int64_t first_wrong = -1;    // the first position with |Δ| > tolerance (-1: none)
    int64_t argmax_changed = 0;  // positions whose greedy token differs from the full pass's
};

// One seed: the model nn::LanguageModel(config, seed) continues the prompt
// greedily with the engine's rolling cache, then the whole sequence is read
// in one full forward pass; the same tokens are decoded again
// (teacher-forced) with each wrong rotation angle.
struct RollingCacheRun {
    std::vector<int64_t> ids;             // the prompt and the greedy tokens
    std::vector<int64_t> held;            // positions in the buffer after the last token, ascending
    LogitsComparison engine;              // the rolling cache, rotating by the absolute position
    std::vector<LogitsComparison> wrong;  // per wrong way of choosing the angle
};

struct RollingCacheCheck {
    std::vector<RollingCacheRun> seeds;  // seed 0 … seeds-1
    int64_t most_slots = 0;              // the most positions a buffer (layer 0's) held after any step
    double engine_error = 0.0;           // max over seeds of engine.max_diff
    std::vector<double> wrong_error;     // per wrong way: the max over seeds of its max_diff
    int64_t wrong_changed = 0;           // greedy tokens changed, over every wrong way and seed,
    int64_t wrong_positions = 0;         // of this many decoded positions
};

// config: a RoPE model with a window W >= 2; `wrong` the rotations to try
// besides RotateBy::AbsolutePosition; `tolerance` decides first_wrong.
RollingCacheCheck check_rolling_cache(const nn::LMConfig& config, const std::vector<int64_t>& prompt,
                                      int64_t new_tokens, const std::vector<RotateBy>& wrong, int seeds,
                                      double tolerance);

}  // namespace lessons::sliding_window
