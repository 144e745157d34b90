#pragma once
// Lesson 02, rotary position embeddings (§4), in six parts:
//   1. R_{Θ,m} and three ways to apply it (full matrix, the slides'
//      element-wise form, the §4.6 matrix form) against ag::rope;
//   2. scores depend only on t - j: R_jᵀ R_t = R_{t-j};
//   3. the slides' "wrong" version (both rotated by t - j) = no rotation;
//   4. rotations keep norms; one frequency aliases, geometric frequencies
//      decay with distance (figure 02_similarity.svg);
//   5. decoding with a cache of rotated keys = the full forward pass;
//   6. §9 pitfall 4: a ModernLM trained with one pairing, run with the
//      other (cached in --out/models, the half one shared with 03-05).
// Parts 1, 2, 3 and 5 draw their vectors or model from every seed 0 … seeds-1.
#include "lessons/common/lesson.h"

namespace lessons::rope {

const Lesson& lesson();

}  // namespace lessons::rope
