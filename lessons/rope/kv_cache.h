#pragma once
// §4.7 RoPE and the KV cache: each key is rotated once, by its own absolute
// position, when it enters the cache, and never touched again; a new token
// only rotates its own q and k. So decoding one token per call with a cache
// must give the logits of reading the whole sequence at once.
#include <cstdint>
#include <vector>

#include "data/farm_language.h"

namespace lessons::rope {

// Position t of one seed's sequence, decoded with the cache.
struct DecodingStep {
    int seed = 0;
    int64_t position = 0;
    int64_t token = 0;        // the farm token read at this position
    int64_t cached_keys = 0;  // keys in layer 0's cache after the step
    double max_diff = 0;      // max |cached - full| over the position's logits
};

struct CachedDecoding {
    std::vector<DecodingStep> steps;  // seed by seed, positions 0 … T-1
    double worst = 0;                 // max max_diff
};

// For each seed 0 … seeds-1, an untrained nn::LMConfig::modern_lm() (init
// seed = seed; the identity holds for any weights) reads T tokens of farm
// sentences laid end to end (drawn with the same seed) twice: all at once
// (forward), and one token per call at its absolute position with a KV cache
// (forward_cached).
CachedDecoding decode_with_cache(int64_t T, int seeds, const farm::Language& language);

}  // namespace lessons::rope
