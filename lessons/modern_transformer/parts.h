#pragma once
// Lesson 05, the modern Transformer (§3, §7), in three parts:
//   1. the recipe in numbers: parameter counts from the modules and from the
//      formula (ModernLM, GPT, Llama-3 8B), RMSNorm against LayerNorm, and
//      SwiGLU's 8d/3 hidden size;
//   2. GPT against ModernLM, same size class, 5 epochs each: parameters, test
//      perplexity over the seeds beside the grammar's own floor;
//   3. learned / no / RoPE positions: subject-verb agreement within and
//      beyond the training lengths, per seed, and the diagnosis (attention
//      on the subject; learned position rows that never got a gradient).
// Default 3 seeds, as the lecture's table; firmer with --seeds 8.
#include "lessons/common/lesson.h"

namespace lessons::modern_transformer {

const Lesson& lesson();

}  // namespace lessons::modern_transformer
