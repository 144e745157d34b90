#pragma once
// Lesson 03, GQA (§5), in three parts:
//   1. §5.2 GQA = MHA with each K/V head copied g times (exactly), and the
//      attention parameters for d = 32, 8 query heads (MHA 4096 … MQA 2304);
//   2. §5.3 Llama-3 8B decoding a batch of 32 × 8192 tokens on an H100: the
//      KV cache and the time per step for MHA, GQA and MQA;
//   3. §5.4 ModernLMs with 4 / 2 / 1 KV heads on the farm language, and
//      uptraining: MHA mean-pooled to 2 KV heads, then one more epoch.
#include "lessons/common/lesson.h"

namespace lessons::gqa {

const Lesson& lesson();

}  // namespace lessons::gqa
